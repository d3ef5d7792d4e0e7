// POST /internal/v1/tenants/{tenantId}/delete: the contacts part of a Tenant's deletion, which the
// auth service calls until it answers done.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseServiceCallers } from '@herald/auth';
import { TOPICS } from '@herald/messages';
import {
  SERVICE_TOKEN,
  startContactsService,
  uniqueEmail,
  type TestContactsService,
} from '../support.js';

/** The auth service's own token: the one caller of the route. */
const AUTH_TOKEN = `test-auth-${randomUUID()}`;

let svc: TestContactsService;
beforeAll(async () => {
  svc = await startContactsService({
    deps: {
      serviceCallers: parseServiceCallers(`events:${SERVICE_TOKEN},auth:${AUTH_TOKEN}`),
      // One batch per call: the batching shows in the answers.
      tenantDeletionTimeBudgetMs: 0,
    },
  });
});
afterAll(() => svc.close());

const deleteTenant = (tenantId: string, token = AUTH_TOKEN) =>
  svc.request('POST', `/internal/v1/tenants/${tenantId}/delete`, { token });

/** Calls the route until it answers done; every answer, in order. */
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

/** What the database holds of a Tenant, table by table. */
async function heldOf(tenantId: string) {
  const count = async (sql: string) =>
    Number((await svc.pool.query<{ n: string }>(sql, [tenantId])).rows[0]!.n);
  return {
    contacts: await count('select count(*) as n from contacts where tenant_id = $1'),
    contactTombstones: await count(
      'select count(*) as n from contact_tombstones where tenant_id = $1',
    ),
    organizations: await count('select count(*) as n from organizations where tenant_id = $1'),
    outbox: await count(
      `select count(*) as n from outbox where value is not null and value::json ->> 'tenantId' = $1`,
    ),
  };
}

/** A Tenant with Contacts (one erased), organizations and unsent messages about them. */
async function populatedTenant(): Promise<{ tenantId: string; contactIds: string[] }> {
  const { tenantId, token } = svc.newTenant();
  const contactIds: string[] = [];
  for (const externalId of ['ada', 'grace', 'erased']) {
    const res = await svc.request('PUT', `/v1/contacts/${externalId}`, {
      token,
      body: { email: uniqueEmail(externalId), name: externalId },
    });
    expect(res.status).toBe(201);
    contactIds.push((await res.json<{ id: string }>()).id);
  }
  expect((await svc.request('POST', '/v1/contacts/erased/erase', { token })).status).toBe(204);
  for (const externalId of ['org-1', 'org-2']) {
    expect((await svc.admin(`/tenants/${tenantId}/organizations`, { externalId })).status).toBe(
      201,
    );
  }
  return { tenantId, contactIds: contactIds.slice(0, 2) };
}

describe("the contacts part of a Tenant's deletion", () => {
  it('when a Tenant is deleted, then its Contacts, erased ids, organizations and unsent messages are gone, with a tombstone for each Contact, and another Tenant keeps all of its own', async () => {
    const deleted = await populatedTenant();
    const kept = await populatedTenant();
    const before = await heldOf(deleted.tenantId);
    // The two live Contacts' snapshots and the erased one's contact.erased.
    expect(before).toEqual({ contacts: 2, contactTombstones: 1, organizations: 2, outbox: 3 });
    const keptBefore = await heldOf(kept.tenantId);

    const answers = await deleteUntilDone(deleted.tenantId);

    expect(answers.at(-1)).toEqual({ done: true, deletedRows: expect.any(Number) });
    expect(answers.reduce((n, a) => n + a.deletedRows, 0)).toBe(2 + 1 + 2 + 3);
    expect(await heldOf(deleted.tenantId)).toEqual({
      contacts: 0,
      contactTombstones: 0,
      organizations: 0,
      outbox: 0,
    });
    expect(await heldOf(kept.tenantId)).toEqual(keptBefore);
    // Compaction drops the deleted Contacts' snapshots from the changed topic.
    const { rows } = await svc.pool.query<{ topic: string; key: string; value: string | null }>(
      'select topic, key, value from outbox where key = any($1::text[])',
      [deleted.contactIds],
    );
    expect(rows).toEqual(
      expect.arrayContaining(
        deleted.contactIds.map((key) => ({ topic: TOPICS.contactsChanged, key, value: null })),
      ),
    );
    expect(rows).toHaveLength(2);
  });

  it('when the deletion is called again, or for a Tenant it never knew, then 200 done with nothing deleted', async () => {
    const { tenantId } = await populatedTenant();
    await deleteUntilDone(tenantId);

    expect(await deleteUntilDone(tenantId)).toEqual([{ done: true, deletedRows: 0 }]);
    expect(await deleteUntilDone(randomUUID())).toEqual([{ done: true, deletedRows: 0 }]);
  });

  it('when a Tenant has more Contacts than a batch, then each call deletes one batch until done', async () => {
    const { tenantId } = svc.newTenant();
    await svc.pool.query(
      `insert into contacts (id, tenant_id, email, email_key)
       select gen_random_uuid(), $1, 'c' || i || '@example.com', 'c' || i || '@example.com'
       from generate_series(1, 2500) as i`,
      [tenantId],
    );

    const answers = await deleteUntilDone(tenantId);

    // 1,000 Contacts per batch, one batch per call with no time budget.
    expect(answers.map((a) => a.deletedRows)).toEqual([1000, 1000, 500]);
    expect(answers.map((a) => a.done)).toEqual([false, false, true]);
    expect((await heldOf(tenantId)).contacts).toBe(0);
  });

  it('when a caller other than auth calls, then 403, and without a known token 401; nothing is deleted', async () => {
    const { tenantId } = await populatedTenant();

    expect((await deleteTenant(tenantId, SERVICE_TOKEN)).status).toBe(403);
    expect((await deleteTenant(tenantId, `unknown-${randomUUID()}`)).status).toBe(401);
    expect((await heldOf(tenantId)).contacts).toBe(2);
  });

  it('when the Tenant id is not a uuid, then 404', async () => {
    expect((await deleteTenant('acme')).status).toBe(404);
  });
});
