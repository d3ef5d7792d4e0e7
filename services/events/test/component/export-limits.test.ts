// Slowly read Contact exports: each one streams from its own database cursor for as long as its
// reader takes. They are bounded per Tenant (429) and in all (503), both with Retry-After, on the
// exports' own connections, so that a burst of them never slows recording. The real seam: the
// events service in-process, the real contacts service relaying its public export.
import { randomUUID } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createPool } from '@herald/db';
import { TEST_POSTGRES_URL } from '@herald/testing';
import { internalPath } from '../contact-data-support.js';
import { SERVICE_TOKEN, startEventsService, type TestEventsService } from '../support.js';

const DATABASE = 'herald_events_test_export_limits';
const LIMITS = { maxConcurrent: 3, maxPerTenant: 2 };
const EXPORT_APP = 'events-export-limits-test';
/**
 * Events per big Contact, each line about 16 KiB: 64 MB, far more than every buffer between the
 * cursor and a reader that reads nothing (socket buffers, through the contacts service too), so
 * such an export stays open, its cursor and slot held, until its reader goes away.
 */
const BIG_EVENTS = 4000;
const NOTE_LENGTH = 16 * 1024;
/** Generous on a shared, loaded machine; a starved pool answers 503 after 5 s. */
const RECORDING_BOUND_MS = 2000;

// The exports' own pool, as index.ts makes it: as many connections as exports may stream.
const exportPool = createPool({
  connectionString: `${TEST_POSTGRES_URL}/${DATABASE}`,
  applicationName: EXPORT_APP,
  max: LIMITS.maxConcurrent,
});
let service: TestEventsService;
const tenants: string[] = [];
const held: HeldExport[] = [];

beforeAll(async () => {
  service = await startEventsService({
    database: DATABASE,
    contactDataSeam: true,
    // Recording's pool, no larger than the number of exports that try to stream below.
    poolMax: 4,
    deps: { exportPool, exportLimits: LIMITS },
  });
}, 60_000);

afterAll(async () => {
  for (const reader of held) reader.close();
  if (service && tenants.length > 0) {
    await service.pool.query('delete from events where tenant_id = any($1::uuid[])', [tenants]);
    await service.pool.query(`delete from outbox where value::jsonb ->> 'tenantId' = any($1)`, [
      tenants,
    ]);
  }
  await service?.close();
  await exportPool.end();
}, 30_000);

interface HeldExport {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body of a refusal (read in full); undefined for a 200, whose body is left unread. */
  body: string | undefined;
  /** The reader goes away (the connection is closed). */
  close(): void;
}

/**
 * GET `url` on a connection of its own. A 200's body is never read (the stream is paused from
 * the first byte on): a reader as slow as can be. Any other answer is read in full.
 */
function openExport(url: string, token: string): Promise<HeldExport> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers: { authorization: `Bearer ${token}` }, agent: false });
    req.on('error', reject);
    req.on('response', (res) => {
      res.on('error', () => {});
      const close = () => {
        req.destroy();
      };
      if (res.statusCode === 200) {
        res.pause();
        resolve({ status: 200, headers: res.headers, body: undefined, close });
        return;
      }
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, close }),
      );
    });
    req.end();
  });
}

/** The events service's internal export, as the contacts service asks for it. */
const internalExport = (tenantId: string, contactId: string) =>
  openExport(`${service.url}${internalPath(tenantId, contactId, 'export')}`, SERVICE_TOKEN);

/** The public export, through the contacts service. */
const publicExport = (tenantId: string, contactId: string) =>
  openExport(
    `${service.contacts.url}/v1/contacts/by-id/${contactId}/export`,
    service.tokenFor(tenantId),
  );

/** Keeps an export open (the test closes it, or afterAll does). */
async function hold(opening: Promise<HeldExport>): Promise<HeldExport> {
  const reader = await opening;
  held.push(reader);
  return reader;
}

/** A Tenant with a Contact (created through the contacts service), whose Events are given. */
async function tenantWithContact(events = 0): Promise<{ tenantId: string; contactId: string }> {
  const { tenantId } = service.newTenant();
  tenants.push(tenantId);
  const { id: contactId } = await service.contacts.createContact(tenantId);
  if (events > 0) {
    // Written by PostgreSQL itself; the repeated note compresses, so it costs little disk.
    await service.pool.query(
      `insert into events (id, tenant_id, contact_id, event_name, occurred_at, received_at,
                           properties)
       select gen_random_uuid(), $1, $2, 'Bulk ' || i, now(), now() + i * interval '1 ms',
              '{"note":"' || repeat('x', $4) || '"}'
       from generate_series(1, $3::int) i`,
      [tenantId, contactId, events, NOTE_LENGTH],
    );
  }
  return { tenantId, contactId };
}

/** The export cursors open now, by the pool (application_name) that holds each. */
async function openCursors(): Promise<string[]> {
  const { rows } = await service.pool.query<{ application_name: string }>(
    `select application_name from pg_stat_activity
     where datname = current_database() and pid <> pg_backend_pid()
       and query like '%from events%order by received_at, id%' and state <> 'idle'`,
  );
  return rows.map((r) => r.application_name);
}

async function eventually(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not so within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function expectRefused(reader: HeldExport, status: 429 | 503): void {
  expect({ status: reader.status, retryAfter: Number(reader.headers['retry-after']) }).toEqual({
    status,
    retryAfter: expect.any(Number),
  });
  expect(Number(reader.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(JSON.parse(reader.body ?? '')).toEqual({
    code: status === 429 ? 'rate_limited' : 'service_unavailable',
    message: expect.any(String),
  });
}

/** Records one Event about the Contact; its status and how long the answer took. */
async function recordTimed(token: string, contactId: string, i: number) {
  const started = Date.now();
  const res = await service.record('by-contact-id', token, {
    contactId,
    eventName: 'Page Viewed',
    occurredAt: new Date().toISOString(),
    dedupKey: `view-${i}-${randomUUID()}`,
  });
  await res.arrayBuffer();
  return { status: res.status, ms: Date.now() - started };
}

describe('slowly read exports', () => {
  test(
    'when more exports are opened than the caps allow and none is read, then those beyond the ' +
      "Tenant's cap are 429 and those beyond the overall cap 503, with Retry-After, through the " +
      'public route too; Events keep being recorded (202, each within a generous bound) while ' +
      'they are held; and once the readers go away, exports are served again',
    async () => {
      const a = await tenantWithContact(BIG_EVENTS);
      const b = await tenantWithContact(BIG_EVENTS);
      const c = await tenantWithContact();
      const tokenA = service.tokenFor(a.tenantId);
      // Recording warmed up (connections, the identity lookup) before anything is held.
      expect((await recordTimed(tokenA, a.contactId, 0)).status).toBe(202);

      // Tenant A: two exports through the public route, held unread; its own cap is reached.
      const heldA = [
        await hold(publicExport(a.tenantId, a.contactId)),
        await hold(publicExport(a.tenantId, a.contactId)),
      ];
      expect(heldA.map((r) => r.status)).toEqual([200, 200]);
      // More of A's: 429, whichever way they come, while capacity is left for other Tenants.
      const beyondA = await Promise.all([
        hold(publicExport(a.tenantId, a.contactId)),
        hold(publicExport(a.tenantId, a.contactId)),
        hold(internalExport(a.tenantId, a.contactId)),
        hold(internalExport(a.tenantId, randomUUID())),
      ]);
      for (const reader of beyondA) expectRefused(reader, 429);

      // Tenant B takes the last slot; then every Tenant is refused with 503, B and C included.
      const heldB = await hold(internalExport(b.tenantId, b.contactId));
      expect(heldB.status).toBe(200);
      const beyondAll = await Promise.all([
        hold(internalExport(b.tenantId, b.contactId)),
        hold(internalExport(c.tenantId, c.contactId)),
        hold(internalExport(c.tenantId, randomUUID())),
        hold(publicExport(c.tenantId, c.contactId)),
        hold(publicExport(b.tenantId, b.contactId)),
      ]);
      for (const reader of beyondAll) expectRefused(reader, 503);
      // A is still at its own cap: still its 429.
      expectRefused(await hold(publicExport(a.tenantId, a.contactId)), 429);

      // The three held exports are streaming, each from a cursor on the exports' own pool.
      expect(await openCursors()).toEqual([EXPORT_APP, EXPORT_APP, EXPORT_APP]);

      // Recording, while they are held: one request after another, then 20 at once.
      const tokenB = service.tokenFor(b.tenantId);
      const sequential = [];
      for (let i = 1; i <= 10; i += 1) {
        sequential.push(
          await recordTimed(i % 2 ? tokenA : tokenB, i % 2 ? a.contactId : b.contactId, i),
        );
      }
      const concurrent = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          recordTimed(service.tokenFor(c.tenantId), c.contactId, 100 + i),
        ),
      );
      for (const answer of [...sequential, ...concurrent]) {
        expect(answer).toEqual({ status: 202, ms: expect.any(Number) });
        expect(answer.ms).toBeLessThan(RECORDING_BOUND_MS);
      }
      // The exports were held all along.
      expect(await openCursors()).toHaveLength(LIMITS.maxConcurrent);

      // The readers go away: their cursors close, their slots come back.
      for (const reader of [...heldA, heldB]) reader.close();
      await eventually(async () => (await openCursors()).length === 0);
      await eventually(async () => {
        const reader = await hold(internalExport(c.tenantId, c.contactId));
        reader.close();
        return reader.status === 200;
      });
      const again = [
        await hold(publicExport(a.tenantId, a.contactId)),
        await hold(publicExport(a.tenantId, a.contactId)),
        await hold(internalExport(c.tenantId, c.contactId)),
      ];
      expect(again.map((r) => r.status)).toEqual([200, 200, 200]);
      for (const reader of again) reader.close();
      await eventually(async () => (await openCursors()).length === 0);
    },
    180_000,
  );
});
