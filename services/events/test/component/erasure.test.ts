// POST /internal/v1/tenants/{tenantId}/contacts/{contactId}/erase: the Events part of a
// Contact's erasure (nothing about it remains), and its race with recording: no Event accepted concurrently
// outlives the erasure.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { PoolClient } from '@herald/db';
import { contactLockKey } from '../../src/export-erasure/data/erasure-fence.js';
import { hashDedupKey } from '../../src/recording/dedup-key.js';
import {
  enqueueRecorded,
  insertDedupClaim,
  insertEvents,
  internalPath,
  newEvent,
  type StoredEvent,
} from '../contact-data-support.js';
import { SERVICE_TOKEN, startEventsService, type TestEventsService } from '../support.js';

let service: TestEventsService;

const erase = (tenantId: string, contactId: string, token = SERVICE_TOKEN) =>
  fetch(`${service.url}${internalPath(tenantId, contactId, 'erase')}`, {
    method: 'POST',
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });

/** Everything this database holds about a Contact (or, with `tenantId` only, a Tenant). */
async function held(tenantId: string, contactId: string) {
  const q = async (sql: string) =>
    (await service.pool.query(sql, [tenantId, contactId])).rows.map((r: { id: string }) => r.id);
  return {
    events: await q(
      'select id from events where tenant_id = $1 and contact_id = $2 order by received_at, id',
    ),
    outbox: await q(
      `select id::text from outbox where subject_id = $2 and value::jsonb ->> 'tenantId' = $1
       order by id`,
    ),
  };
}

const isErased = async (tenantId: string, contactId: string) =>
  (
    await service.pool.query(
      'select 1 from erased_contacts where tenant_id = $1 and contact_id = $2',
      [tenantId, contactId],
    )
  ).rowCount === 1;

/** The dedup claims held by these Events (by event id): what the claims table keeps of them. */
async function claimsOf(events: readonly StoredEvent[]) {
  const { rows } = await service.pool.query<{ dedup_key: string }>(
    'select dedup_key from dedup_claims where event_id = any($1::uuid[]) order by dedup_key',
    [events.map((e) => e.id)],
  );
  return rows.map((r) => r.dedup_key);
}

/** Events of a Contact with a dedupKey each, their claims and their unsent messages. */
async function seedContact(tenantId: string, contactId: string, count = 3) {
  const events = Array.from({ length: count }, (_, i) =>
    newEvent({
      tenantId,
      contactId,
      dedupKey: `${contactId}-${i}`,
      properties: JSON.stringify({ email: 'private@example.com' }),
    }),
  );
  await insertEvents(service.pool, events);
  for (const e of events) {
    await insertDedupClaim(service.pool, {
      tenantId,
      dedupKey: hashDedupKey(e.dedupKey!),
      eventId: e.id,
    });
  }
  await enqueueRecorded(service.pool, events);
  return events;
}

/** Resolves once some session waits for an advisory lock (of any key). */
async function someoneWaitsForAdvisoryLock(): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { rowCount } = await service.pool.query(
      `select 1 from pg_locks where locktype = 'advisory' and not granted
       and database = (select oid from pg_database where datname = current_database())`,
    );
    if (rowCount) return;
    if (Date.now() > deadline) throw new Error('nobody waits for an advisory lock');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

beforeAll(async () => {
  // Its own database: no relay deletes the outbox rows read here.
  service = await startEventsService({ database: 'herald_events_test_erasure', poolMax: 40 });
});

afterAll(async () => {
  await service?.close();
});

describe('answer and stored state', () => {
  test("when a Contact is erased, then 204, and its Events (organization Events naming it included) and their unsent messages are gone, their dedup claims (hashes only) stay; other Contacts' and other Tenants' are untouched", async () => {
    const tenantId = randomUUID();
    const otherTenant = randomUUID();
    const contactId = randomUUID();
    const neighbour = randomUUID();
    const mine = await seedContact(tenantId, contactId);
    const orgEvent = newEvent({ tenantId, contactId, organizationExternalId: 'acme' });
    await insertEvents(service.pool, [orgEvent]);
    await enqueueRecorded(service.pool, [orgEvent]);
    const theirs = await seedContact(tenantId, neighbour);
    const otherTenants = await seedContact(otherTenant, randomUUID());
    const orgOnly = newEvent({ tenantId, organizationExternalId: 'acme' });
    await insertEvents(service.pool, [orgOnly]);
    expect((await held(tenantId, contactId)).events).toHaveLength(mine.length + 1);

    const res = await erase(tenantId, contactId);

    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect(await held(tenantId, contactId)).toEqual({ events: [], outbox: [] });
    expect(await isErased(tenantId, contactId)).toBe(true);
    // A claim holds only the key's hash: it lasts its window, so a resent key stays a duplicate.
    expect(await claimsOf(mine)).toEqual(mine.map((e) => hashDedupKey(e.dedupKey!)).sort());
    const ids = (events: StoredEvent[]) => events.map((e) => e.id).sort();
    const stillThere = await service.pool.query<{ id: string }>(
      'select id from events where id = any($1::uuid[]) order by id',
      [[...ids(theirs), ...ids(otherTenants), orgOnly.id]],
    );
    expect(stillThere.rows.map((r) => r.id)).toEqual(
      [...ids(theirs), ...ids(otherTenants), orgOnly.id].sort(),
    );
    const neighbourHeld = await held(tenantId, neighbour);
    expect(await claimsOf(theirs)).toHaveLength(theirs.length);
    expect(neighbourHeld.outbox).toHaveLength(theirs.length);
    expect(await isErased(tenantId, neighbour)).toBe(false);
  });

  test('when the erasure is repeated, then 204 each time and nothing else changes', async () => {
    const tenantId = randomUUID();
    const contactId = randomUUID();
    await seedContact(tenantId, contactId);

    const answers = [];
    for (let i = 0; i < 3; i += 1) answers.push((await erase(tenantId, contactId)).status);

    expect(answers).toEqual([204, 204, 204]);
    expect(await held(tenantId, contactId)).toEqual({ events: [], outbox: [] });
    expect(await isErased(tenantId, contactId)).toBe(true);
  });

  test('when two erasures of one Contact run at once, then both answer 204', async () => {
    const tenantId = randomUUID();
    const contactId = randomUUID();
    await seedContact(tenantId, contactId, 50);

    const answers = await Promise.all([erase(tenantId, contactId), erase(tenantId, contactId)]);

    expect(answers.map((r) => r.status)).toEqual([204, 204]);
    expect(await held(tenantId, contactId)).toEqual({ events: [], outbox: [] });
  });

  test('when a Contact without Events is erased, then 204 and it is remembered as erased', async () => {
    const tenantId = randomUUID();
    const contactId = randomUUID();

    const res = await erase(tenantId, contactId);

    expect(res.status).toBe(204);
    expect(await isErased(tenantId, contactId)).toBe(true);
  });

  test('when the erasure is asked without the service token, with a wrong one or with a customer token, then 401 and nothing is erased', async () => {
    const { tenantId, token } = service.newTenant();
    const contactId = randomUUID();
    await seedContact(tenantId, contactId);

    for (const wrong of ['', 'not-the-service-token', token]) {
      const res = await erase(tenantId, contactId, wrong);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 'unauthenticated' });
    }
    expect((await held(tenantId, contactId)).events).toHaveLength(3);
    expect(await isErased(tenantId, contactId)).toBe(false);
  });

  test.each([
    ['the Tenant id', 'not-a-uuid', randomUUID()],
    ['the Contact id', randomUUID(), 'not-a-uuid'],
  ])('when %s is malformed, then 404 not_found', async (_what, tenantId, contactId) => {
    const res = await erase(tenantId, contactId);

    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'not_found' });
  });

  test('when the erasure is asked with GET, then 405', async () => {
    const res = await fetch(`${service.url}${internalPath(randomUUID(), randomUUID(), 'erase')}`, {
      headers: { authorization: `Bearer ${SERVICE_TOKEN}` },
    });

    expect(res.status).toBe(405);
  });
});

describe('erasure against recording', () => {
  const occurredAt = '2026-11-21T10:00:00Z';

  test('when a Contact was erased, then recording an Event about it is refused with 422 and nothing is stored', async () => {
    const { tenantId, token } = service.newTenant();
    const contact = await service.contacts.createContact(tenantId);
    expect((await erase(tenantId, contact.id)).status).toBe(204);

    const res = await service.record('by-contact-id', token, {
      contactId: contact.id,
      eventName: 'Too Late',
      occurredAt,
    });

    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ code: 'unresolved_identity' });
    expect(await held(tenantId, contact.id)).toEqual({ events: [], outbox: [] });
  });

  test('when a recording transaction of the Contact is in flight, then the erasure waits for its commit and deletes its Events too', async () => {
    const tenantId = randomUUID();
    const contactId = randomUUID();
    const event = newEvent({ tenantId, contactId });
    // What recording does, held open: the shared lock, then its rows.
    const recording: PoolClient = await service.pool.connect();
    try {
      await recording.query('begin');
      await recording.query('select pg_advisory_xact_lock_shared($1::bigint)', [
        contactLockKey(tenantId, contactId),
      ]);
      await insertEvents(recording, [event]);

      const erasing = erase(tenantId, contactId);
      await someoneWaitsForAdvisoryLock();
      await recording.query('commit');
      const res = await erasing;

      expect(res.status).toBe(204);
      expect((await held(tenantId, contactId)).events).toEqual([]);
    } finally {
      recording.release();
    }
  });

  test('when an erasure holds the lock, then a recording waits for it and is then refused (422), nothing stored', async () => {
    const { tenantId, token } = service.newTenant();
    const contact = await service.contacts.createContact(tenantId);
    // What an erasure does, held open: the exclusive lock, then the erased mark.
    const erasing = await service.pool.connect();
    try {
      await erasing.query('begin');
      await erasing.query('select pg_advisory_xact_lock($1::bigint)', [
        contactLockKey(tenantId, contact.id),
      ]);
      await erasing.query('insert into erased_contacts (tenant_id, contact_id) values ($1, $2)', [
        tenantId,
        contact.id,
      ]);

      const recording = service.record('by-contact-id', token, {
        contactId: contact.id,
        eventName: 'Racing',
        occurredAt,
      });
      await someoneWaitsForAdvisoryLock();
      await erasing.query('commit');
      const res = await recording;

      expect(res.status).toBe(422);
      expect(await held(tenantId, contact.id)).toEqual({ events: [], outbox: [] });
    } finally {
      erasing.release();
    }
  });

  test('when recordings and the erasure of one Contact race, many times over, then no Event about it survives, and each recording answered 202 (before the erasure) or 422 (after)', async () => {
    const { tenantId, token } = service.newTenant();
    const contacts = await Promise.all(
      Array.from({ length: 25 }, () => service.contacts.createContact(tenantId)),
    );
    const outcomes: number[] = [];

    await Promise.all(
      contacts.map(async (contact, i) => {
        const record = (n: number) =>
          service.record(
            'by-contact-id',
            token,
            Array.from({ length: 5 }, (_, j) => ({
              contactId: contact.id,
              eventName: `race ${i}.${n}.${j}`,
              occurredAt,
              dedupKey: `race-${contact.id}-${n}-${j}`,
              properties: { secret: 'personal' },
            })),
          );
        // Recordings spread around the erasure: it starts after 0 to 24 ms, while they are
        // resolving identities, waiting for the lock, writing or already committed.
        const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
        const recordings = [0, 1, 2, 3].map(async (n) => {
          await pause(n * 4);
          return record(n);
        });
        await pause(i % 25);
        const erased = await erase(tenantId, contact.id);
        expect(erased.status).toBe(204);
        for (const res of await Promise.all(recordings)) {
          outcomes.push(res.status);
          await res.body?.cancel();
        }
      }),
    );

    for (const contact of contacts) {
      expect(await held(tenantId, contact.id)).toEqual({ events: [], outbox: [] });
    }
    expect(outcomes.every((s) => s === 202 || s === 422)).toBe(true);
    // Every answer was one of the two; an erased Contact refuses whatever comes later.
    for (const contact of contacts) {
      const late = await service.record('by-contact-id', token, {
        contactId: contact.id,
        eventName: 'after',
        occurredAt,
      });
      expect(late.status).toBe(422);
    }
  }, 120_000);
});

describe('dedup across an erasure', () => {
  const occurredAt = '2026-11-21T10:00:00Z';

  /**
   * Records key K about Contact X, erases X, creates a new Contact and resends K about it, inside
   * the window, through `resend` (one events service or another on the same database).
   */
  async function eraseThenResend(resend: TestEventsService) {
    const { tenantId, token } = service.newTenant();
    resend.tenants.add(tenantId);
    const key = `order-${randomUUID()}`;
    const x = await service.contacts.createContact(tenantId);
    const first = await service.record('by-contact-id', token, {
      contactId: x.id,
      eventName: 'Ordered',
      occurredAt,
      dedupKey: key,
    });
    expect(first.status).toBe(202);
    expect((await erase(tenantId, x.id)).status).toBe(204);
    const again = await service.contacts.createContact(tenantId);

    const res = await resend.record('by-contact-id', resend.tokenFor(tenantId), {
      contactId: again.id,
      eventName: 'Ordered',
      occurredAt,
      dedupKey: key,
    });

    const stored = await service.pool.query(
      'select 1 from events where tenant_id = $1 and contact_id = $2',
      [tenantId, again.id],
    );
    return { status: res.status, body: await res.json(), recorded: stored.rowCount };
  }

  test('when a key is resent inside the window after its Contact was erased and re-created, then it is a duplicate with Redis up and with Redis down alike', async () => {
    const withRedis = await eraseThenResend(service);
    const redisDown = await startEventsService({
      database: 'herald_events_test_erasure',
      redisUrl: 'redis://127.0.0.1:9',
      contactsUrl: service.contacts.url,
    });
    let withoutRedis;
    try {
      withoutRedis = await eraseThenResend(redisDown);
    } finally {
      await redisDown.close();
    }

    const duplicate = { status: 202, body: { accepted: 1 }, recorded: 0 };
    expect(withRedis).toEqual(duplicate);
    expect(withoutRedis).toEqual(duplicate);
  });
});
