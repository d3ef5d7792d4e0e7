// POST /internal/v1/tenants/{tenantId}/delete: the events part of a Tenant's deletion, which the
// auth service calls until it answers done. Rows are written straight into the tables.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseServiceCallers } from '@herald/auth';
import {
  enqueueRecorded,
  insertDedupClaim,
  insertEvents,
  newEvent,
} from '../contact-data-support.js';
import { SERVICE_TOKEN, startEventsService, type TestEventsService } from '../support.js';

/** The auth service's own token: the one caller of the route. */
const AUTH_TOKEN = `test-auth-${randomUUID()}`;

let service: TestEventsService;
beforeAll(async () => {
  service = await startEventsService({
    // No identity is resolved here: the contacts process is never started.
    contactsUrl: 'http://127.0.0.1:9',
    deps: {
      serviceCallers: parseServiceCallers(`contacts:${SERVICE_TOKEN},auth:${AUTH_TOKEN}`),
      // One batch per call: the batching shows in the answers.
      tenantDeletionTimeBudgetMs: 0,
    },
  });
});
afterAll(() => service.close());

const deleteTenant = (tenantId: string, token = AUTH_TOKEN) =>
  service.request('POST', `/internal/v1/tenants/${tenantId}/delete`, { token });

async function deleteUntilDone(tenantId: string) {
  const answers: { done: boolean; deletedRows: number }[] = [];
  for (let i = 0; i < 50; i += 1) {
    const res = await deleteTenant(tenantId);
    expect(res.status).toBe(200);
    const answer = await res.json<{ done: boolean; deletedRows: number }>();
    answers.push(answer);
    if (answer.done) return answers;
  }
  throw new Error(`not done after 50 calls: ${JSON.stringify(answers.slice(-3))}`);
}

/** How many rows of the Tenant each table holds. */
async function heldOf(tenantId: string) {
  const count = async (table: string, where = 'tenant_id = $1') =>
    Number(
      (
        await service.pool.query<{ n: string }>(
          `select count(*) as n from ${table} where ${where}`,
          [tenantId],
        )
      ).rows[0]!.n,
    );
  return {
    events: await count('events'),
    dedupClaims: await count('dedup_claims'),
    eventNames: await count('event_names'),
    erasedContacts: await count('erased_contacts'),
    contactIdentities: await count('contact_identities'),
    outbox: await count('outbox', `value is not null and value::json ->> 'tenantId' = $1`),
  };
}

/**
 * A Tenant with Events about Contacts and of an organization alone, their claims, names and
 * unsent messages, an erased Contact and the identity projection of two Contacts.
 */
async function populatedTenant(eventsPerContact = 3): Promise<string> {
  const tenantId = randomUUID();
  const contacts = [randomUUID(), randomUUID()];
  const events = [
    ...contacts.flatMap((contactId) =>
      Array.from({ length: eventsPerContact }, (_, i) =>
        newEvent({ tenantId, contactId, eventName: `Viewed ${i}`, dedupKey: `k-${randomUUID()}` }),
      ),
    ),
    newEvent({ tenantId, organizationExternalId: 'org-1', eventName: 'Renewed' }),
  ];
  await insertEvents(service.pool, events);
  await enqueueRecorded(service.pool, events);
  for (const event of events.filter((e) => e.dedupKey !== null)) {
    await insertDedupClaim(service.pool, {
      tenantId,
      dedupKey: event.dedupKey!,
      eventId: event.id,
    });
  }
  await service.pool.query(
    `insert into event_names (tenant_id, name) select distinct $1::uuid, unnest($2::text[])`,
    [tenantId, events.map((e) => e.eventName)],
  );
  await service.pool.query('insert into erased_contacts (tenant_id, contact_id) values ($1, $2)', [
    tenantId,
    randomUUID(),
  ]);
  await service.pool.query(
    `insert into contact_identities (tenant_id, contact_id, external_id_sha256, updated_at)
     select $1, unnest($2::uuid[]), sha256(gen_random_uuid()::text::bytea), now()`,
    [tenantId, contacts],
  );
  return tenantId;
}

describe("the events part of a Tenant's deletion", () => {
  it('when a Tenant is deleted, then its Events, claims, names, erased ids, identities and unsent messages are gone, and another Tenant keeps all of its own', async () => {
    const deleted = await populatedTenant();
    const kept = await populatedTenant();
    expect(await heldOf(deleted)).toEqual({
      events: 7,
      dedupClaims: 6,
      eventNames: 4,
      erasedContacts: 1,
      contactIdentities: 2,
      outbox: 7,
    });
    const keptBefore = await heldOf(kept);

    const answers = await deleteUntilDone(deleted);

    expect(answers.at(-1)?.done).toBe(true);
    expect(answers.reduce((n, a) => n + a.deletedRows, 0)).toBe(7 + 6 + 4 + 1 + 2 + 7);
    expect(await heldOf(deleted)).toEqual({
      events: 0,
      dedupClaims: 0,
      eventNames: 0,
      erasedContacts: 0,
      contactIdentities: 0,
      outbox: 0,
    });
    expect(await heldOf(kept)).toEqual(keptBefore);
  });

  it('when the deletion is called again, or for a Tenant it never knew, then 200 done with nothing deleted', async () => {
    const tenantId = await populatedTenant();
    await deleteUntilDone(tenantId);

    expect(await deleteUntilDone(tenantId)).toEqual([{ done: true, deletedRows: 0 }]);
    expect(await deleteUntilDone(randomUUID())).toEqual([{ done: true, deletedRows: 0 }]);
  });

  it('when a Tenant has more Events than a batch, then each call deletes at most a batch of 5,000 until done', async () => {
    const tenantId = randomUUID();
    await service.pool.query(
      `insert into events (id, tenant_id, contact_id, event_name, occurred_at)
       select gen_random_uuid(), $1, gen_random_uuid(), 'Bulk', now() from generate_series(1, 12000)`,
      [tenantId],
    );

    const answers = await deleteUntilDone(tenantId);

    expect(answers.map((a) => a.deletedRows)).toEqual([5000, 5000, 2000]);
    expect(answers.map((a) => a.done)).toEqual([false, false, true]);
    expect((await heldOf(tenantId)).events).toBe(0);
  });

  it('when a caller other than auth calls, then 403, and without a known token 401; nothing is deleted', async () => {
    const tenantId = await populatedTenant();

    expect((await deleteTenant(tenantId, SERVICE_TOKEN)).status).toBe(403);
    expect((await deleteTenant(tenantId, `unknown-${randomUUID()}`)).status).toBe(401);
    expect((await heldOf(tenantId)).events).toBe(7);
  });
});
