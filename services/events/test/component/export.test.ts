// GET /internal/v1/tenants/{tenantId}/contacts/{contactId}/export: the Events part of a
// Contact's GDPR export, as the contacts service reads it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createPool } from '@herald/db';
import {
  EXPORT_BATCH_SIZE,
  openContactEventsCursor,
} from '../../src/export-erasure/data/events-export.js';
import {
  CONTACT_DATA_SERVICE_TOKEN,
  insertEvents,
  internalPath,
  newEvent,
  parseLines,
  prepareTestDatabase,
  startContactDataRoutes,
  testPool,
  type StoredEvent,
} from '../contact-data-support.js';

const DATABASE = 'herald_events_test_contact_data';
const pool = testPool(DATABASE);
let service: { url: string; close(): Promise<void> };

const exportOf = (tenantId: string, contactId: string, token = CONTACT_DATA_SERVICE_TOKEN) =>
  fetch(`${service.url}${internalPath(tenantId, contactId, 'export')}`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });

/** The line the export writes for a stored Event. */
const lineOf = (e: StoredEvent) => ({
  type: 'event',
  data: {
    id: e.id,
    eventName: e.eventName,
    occurredAt: new Date(e.occurredAt).toISOString(),
    receivedAt: new Date(e.receivedAt).toISOString(),
    organizationExternalId: e.organizationExternalId,
    dedupKey: e.dedupKey,
    properties: e.properties === null ? null : JSON.parse(e.properties),
  },
});

beforeAll(async () => {
  await prepareTestDatabase(DATABASE);
  service = await startContactDataRoutes(pool);
});

afterAll(async () => {
  await service?.close();
  await pool.end();
});

describe('answer', () => {
  test('when a Contact has Events, then the export answers 200 JSON Lines, one exact line per Event about it in the order received, organization Events naming it included', async () => {
    const tenantId = randomUUID();
    const contactId = randomUUID();
    const mine = [
      newEvent({
        tenantId,
        contactId,
        eventName: 'Signed Up',
        receivedAt: '2026-11-21T09:00:00.000Z',
        occurredAt: '2026-11-21T10:59:59.5+02:00',
        properties: '{"plan":"free","seats":3,"tags":["a","b"],"nested":{"ok":true}}',
        dedupKey: 'signup-1',
      }),
      newEvent({
        tenantId,
        contactId,
        organizationExternalId: 'acme/eu',
        eventName: 'Plan Upgraded',
        receivedAt: '2026-11-21T09:00:01.000Z',
      }),
      // Received last, inserted first: the order is the receiving order, not the insert order.
      newEvent({ tenantId, contactId, eventName: 'Logged In', receivedAt: '2026-11-21T09:00:02Z' }),
    ];
    await insertEvents(pool, [mine[2]!, mine[0]!, mine[1]!]);
    await insertEvents(pool, [
      newEvent({ tenantId, contactId: randomUUID() }),
      newEvent({ tenantId, organizationExternalId: 'acme/eu' }),
    ]);

    const res = await exportOf(tenantId, contactId);

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const body = await res.text();
    expect(body.endsWith('\n')).toBe(true);
    expect(parseLines(body)).toEqual(mine.map(lineOf));
    expect(parseLines(body)[0]).toEqual({
      type: 'event',
      data: {
        id: mine[0]!.id,
        eventName: 'Signed Up',
        occurredAt: '2026-11-21T08:59:59.500Z',
        receivedAt: '2026-11-21T09:00:00.000Z',
        organizationExternalId: null,
        dedupKey: 'signup-1',
        properties: { plan: 'free', seats: 3, tags: ['a', 'b'], nested: { ok: true } },
      },
    });
    // The key order of the line is the documented one.
    expect(Object.keys((parseLines(body)[0] as { data: object }).data)).toEqual([
      'id',
      'eventName',
      'occurredAt',
      'receivedAt',
      'organizationExternalId',
      'dedupKey',
      'properties',
    ]);
  });

  test('when two Events were received in the same microsecond, then their ids order them', async () => {
    const tenantId = randomUUID();
    const contactId = randomUUID();
    const receivedAt = '2026-11-21T09:00:00.000Z';
    const events = Array.from({ length: 5 }, () => newEvent({ tenantId, contactId, receivedAt }));
    await insertEvents(pool, events);

    const lines = parseLines(await (await exportOf(tenantId, contactId)).text());

    expect(lines.map((l) => (l as { data: { id: string } }).data.id)).toEqual(
      events.map((e) => e.id).sort(),
    );
  });

  test('when the Contact has no Events, then the export is 200 with an empty body', async () => {
    const res = await exportOf(randomUUID(), randomUUID());

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(await res.text()).toBe('');
  });

  test("when another Tenant holds Events with the same Contact id, then they never appear in this Tenant's export", async () => {
    const tenantId = randomUUID();
    const otherTenant = randomUUID();
    const contactId = randomUUID();
    const ours = newEvent({ tenantId, contactId, eventName: 'ours' });
    await insertEvents(pool, [
      ours,
      newEvent({ tenantId: otherTenant, contactId, eventName: 'theirs' }),
      newEvent({ tenantId: otherTenant, contactId, eventName: 'theirs too' }),
    ]);

    const lines = parseLines(await (await exportOf(tenantId, contactId)).text());

    expect(lines).toEqual([lineOf(ours)]);
  });

  test('when the path names the ids in capitals, then it is the same Contact', async () => {
    const tenantId = randomUUID();
    const contactId = randomUUID();
    const event = newEvent({ tenantId, contactId });
    await insertEvents(pool, [event]);

    const res = await exportOf(tenantId.toUpperCase(), contactId.toUpperCase());

    expect(parseLines(await res.text())).toEqual([lineOf(event)]);
  });
});

describe('refusals', () => {
  test('when the service token is missing or wrong, then 401 and nothing is exported', async () => {
    const tenantId = randomUUID();
    const contactId = randomUUID();
    await insertEvents(pool, [newEvent({ tenantId, contactId })]);

    for (const token of ['', 'not-the-service-token']) {
      const res = await exportOf(tenantId, contactId, token);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 'unauthenticated' });
    }
  });

  test.each([
    ['the Tenant id', 'not-a-uuid', randomUUID()],
    ['the Contact id', randomUUID(), 'not-a-uuid'],
    ['the Contact id (almost a uuid)', randomUUID(), `${randomUUID()}0`],
  ])('when %s is malformed, then 404 not_found', async (_what, tenantId, contactId) => {
    const res = await exportOf(tenantId, contactId);

    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'not_found' });
  });

  test('when the export is asked with POST, then 405', async () => {
    const res = await fetch(`${service.url}${internalPath(randomUUID(), randomUUID(), 'export')}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CONTACT_DATA_SERVICE_TOKEN}` },
    });

    expect(res.status).toBe(405);
  });

  test('when the database is unreachable, then 503 before any line is written', async () => {
    const deadPool = createPool({
      connectionString: 'postgres://herald@127.0.0.1:1/herald_events',
      applicationName: 'events-test-dead',
    });
    const dead = await startContactDataRoutes(deadPool);
    try {
      const res = await fetch(`${dead.url}${internalPath(randomUUID(), randomUUID(), 'export')}`, {
        headers: { authorization: `Bearer ${CONTACT_DATA_SERVICE_TOKEN}` },
      });

      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBeTruthy();
      expect(await res.json()).toMatchObject({ code: 'service_unavailable' });
    } finally {
      await dead.close();
      await deadPool.end();
    }
  });
});

describe('streaming from a database cursor', () => {
  const COUNT = 20_000;
  const tenantId = randomUUID();
  const contactId = randomUUID();
  // About 1 KiB a line, 20 MB in all: far more than the socket buffers between here and there.
  const properties = JSON.stringify({ note: 'x'.repeat(1000) });
  const start = Date.parse('2026-11-01T00:00:00.000Z');

  beforeAll(async () => {
    for (let i = 0; i < COUNT; i += 5000) {
      await insertEvents(
        pool,
        Array.from({ length: 5000 }, (_, j) =>
          newEvent({
            tenantId,
            contactId,
            eventName: `event ${i + j}`,
            receivedAt: new Date(start + (i + j) * 1000).toISOString(),
            properties,
          }),
        ),
      );
    }
  }, 60_000);

  /** The backends running the export's cursor: open until the last row is read or it is closed. */
  const exportQueries = async () =>
    (
      await pool.query<{ state: string }>(
        `select state from pg_stat_activity
         where datname = current_database() and pid <> pg_backend_pid()
           and query like '%from events%order by received_at, id%' and state <> 'idle'`,
      )
    ).rows;

  test('when a Contact has 20,000 Events, then every one is exported in order', async () => {
    const res = await exportOf(tenantId, contactId);
    expect(res.status).toBe(200);

    let count = 0;
    let buffered = '';
    let inOrder = true;
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        const { data } = JSON.parse(line) as { data: { eventName: string } };
        if (data.eventName !== `event ${count}`) inOrder = false;
        count += 1;
      }
    }

    expect(buffered).toBe('');
    expect(count).toBe(COUNT);
    expect(inOrder).toBe(true);
  }, 60_000);

  test('when the reader has taken the first lines and pauses, then the cursor is still open (nothing was read ahead in full), and when it goes away the cursor is closed', async () => {
    const res = await exportOf(tenantId, contactId);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    const firstLine = new TextDecoder().decode(first.value).split('\n')[0]!;
    expect(JSON.parse(firstLine)).toMatchObject({ data: { eventName: 'event 0' } });

    // The query has not finished: the rows the reader has not asked for are still in the database.
    expect(await exportQueries()).toHaveLength(1);

    await reader.cancel();
    const deadline = Date.now() + 10_000;
    while ((await exportQueries()).length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await exportQueries()).toHaveLength(0);
  }, 60_000);

  test(`when the cursor is read, then each read brings at most ${EXPORT_BATCH_SIZE} rows`, async () => {
    const cursor = await openContactEventsCursor(pool, tenantId, contactId);
    const sizes: number[] = [];
    try {
      for (;;) {
        const rows = await cursor.read();
        if (rows.length === 0) break;
        sizes.push(rows.length);
      }
    } finally {
      await cursor.close();
    }

    expect(sizes).toHaveLength(COUNT / EXPORT_BATCH_SIZE);
    expect(sizes.every((n) => n === EXPORT_BATCH_SIZE)).toBe(true);
  }, 60_000);
});
