// The per-Tenant retention sweep against a real database migrated like the service's: which
// Events it deletes (by received_at, Contact and organization Events alike), which it keeps, the
// Contact export afterwards, its batches, and recording going on meanwhile.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Pool } from '@herald/db';
import { pollUntil, startStandInServer } from '@herald/testing';
import { authRetentionSource } from '../../src/retention/clients/auth-retention-source.js';
import { deleteTenantEventsBatch } from '../../src/retention/data/retention-deletes.js';
import { DAY_MS, type RetentionSettings } from '../../src/retention/retention-policy.js';
import { sweepRetention } from '../../src/retention/sweep.js';
import {
  CONTACT_DATA_SERVICE_TOKEN,
  insertEvents,
  internalPath,
  newEvent,
  parseLines,
  startContactDataRoutes,
  type StoredEvent,
} from '../contact-data-support.js';
import { startEventsService, type TestEventsService } from '../support.js';

const DATABASE = 'herald_events_test_retention';

let svc: TestEventsService;
let exportRoutes: { url: string; close(): Promise<void> };
beforeAll(async () => {
  svc = await startEventsService({ database: DATABASE });
  exportRoutes = await startContactDataRoutes(svc.pool);
});
afterAll(async () => {
  await exportRoutes?.close();
  await svc?.close();
});

const settings = (value: RetentionSettings) => () => Promise.resolve(value);

/** Received `days` days ago (fractions allowed). */
const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS).toISOString();

async function storedIds(tenantId: string): Promise<string[]> {
  const { rows } = await svc.pool.query<{ id: string }>(
    'select id from events where tenant_id = $1 order by received_at, id',
    [tenantId],
  );
  return rows.map((row) => row.id);
}

const idsOf = (events: readonly StoredEvent[]) =>
  [...events]
    .sort((a, b) => a.receivedAt.localeCompare(b.receivedAt) || a.id.localeCompare(b.id))
    .map((e) => e.id);

async function exportedIds(tenantId: string, contactId: string): Promise<string[]> {
  const res = await fetch(`${exportRoutes.url}${internalPath(tenantId, contactId, 'export')}`, {
    headers: { authorization: `Bearer ${CONTACT_DATA_SERVICE_TOKEN}` },
  });
  expect(res.status).toBe(200);
  return (parseLines(await res.text()) as Array<{ type: string; data: { id: string } }>)
    .filter((line) => line.type === 'event')
    .map((line) => line.data.id);
}

describe('the retention sweep', () => {
  it('when a Tenant keeps Events shorter than the longest, then its Events older than its retention are deleted, Contact and organization Events alike, and the newer ones and a longer Tenant’s stay', async () => {
    const [shortTenant, longTenant] = [randomUUID(), randomUUID()];
    const contactId = randomUUID();
    const contact = (tenantId: string, days: number) =>
      newEvent({ tenantId, contactId, receivedAt: daysAgo(days) });
    const organization = (tenantId: string, days: number) =>
      newEvent({ tenantId, organizationExternalId: 'acme', receivedAt: daysAgo(days) });
    const expired = [
      contact(shortTenant, 400),
      contact(shortTenant, 31),
      organization(shortTenant, 45),
    ];
    const kept = [
      contact(shortTenant, 29),
      contact(shortTenant, 0.01),
      organization(shortTenant, 2),
    ];
    const longer = [
      contact(longTenant, 400),
      organization(longTenant, 100),
      contact(longTenant, 1),
    ];
    await insertEvents(svc.pool, [...expired, ...kept, ...longer]);

    const report = await sweepRetention({
      pool: svc.pool,
      retention: settings({
        defaultDays: 365,
        tenants: [
          { tenantId: shortTenant, days: 30 },
          { tenantId: longTenant, days: 730 },
        ],
      }),
    });

    expect(await storedIds(shortTenant)).toEqual(idsOf(kept));
    expect(await storedIds(longTenant)).toEqual(idsOf(longer));
    expect(report.longestRetentionDays).toBe(730);
    expect(report.failed).toEqual([]);
    expect(report.stopped).toBe(false);
    expect(report.tenants.find((t) => t.tenantId === shortTenant)).toEqual({
      tenantId: shortTenant,
      days: 30,
      before: new Date(report.startedAt.getTime() - 30 * DAY_MS),
      deleted: 3,
    });
    expect(report.tenants.find((t) => t.tenantId === longTenant)).toBeUndefined();
  });

  it('when Events of a Contact expire, then the Contact’s export no longer has them', async () => {
    const tenantId = randomUUID();
    const contactId = randomUUID();
    const old = newEvent({ tenantId, contactId, receivedAt: daysAgo(10) });
    const organizationOld = newEvent({
      tenantId,
      contactId,
      organizationExternalId: 'acme',
      receivedAt: daysAgo(8),
    });
    const recent = newEvent({ tenantId, contactId, receivedAt: daysAgo(1) });
    await insertEvents(svc.pool, [old, organizationOld, recent]);
    expect(await exportedIds(tenantId, contactId)).toEqual([old.id, organizationOld.id, recent.id]);

    await sweepRetention({
      pool: svc.pool,
      retention: settings({ defaultDays: 730, tenants: [{ tenantId, days: 7 }] }),
    });

    expect(await exportedIds(tenantId, contactId)).toEqual([recent.id]);
  });

  it('when the default is shorter than the longest, then a Tenant without a retention of its own is swept to the default, found in the events table alone', async () => {
    const [atDefault, ownLonger, ownLongest] = [randomUUID(), randomUUID(), randomUUID()];
    const at = (tenantId: string, days: number) =>
      newEvent({ tenantId, contactId: randomUUID(), receivedAt: daysAgo(days) });
    const defaultExpired = [at(atDefault, 100), at(atDefault, 91)];
    const defaultKept = [at(atDefault, 89)];
    // Longer than the default, shorter than the longest: kept to its own 200 days.
    const ownExpired = [at(ownLonger, 250)];
    const ownKept = [at(ownLonger, 150)];
    const longest = [at(ownLongest, 1000)];
    await insertEvents(svc.pool, [
      ...defaultExpired,
      ...defaultKept,
      ...ownExpired,
      ...ownKept,
      ...longest,
    ]);

    const report = await sweepRetention({
      pool: svc.pool,
      retention: settings({
        defaultDays: 90,
        tenants: [
          { tenantId: ownLonger, days: 200 },
          { tenantId: ownLongest, days: 3650 },
        ],
      }),
    });

    expect(await storedIds(atDefault)).toEqual(idsOf(defaultKept));
    expect(await storedIds(ownLonger)).toEqual(idsOf(ownKept));
    expect(await storedIds(ownLongest)).toEqual(idsOf(longest));
    expect(report.longestRetentionDays).toBe(3650);
    const swept: string[] = [atDefault, ownLonger];
    expect(report.tenants.filter((t) => swept.includes(t.tenantId))).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ tenantId: atDefault, days: 90, deleted: 2 }),
        expect.objectContaining({ tenantId: ownLonger, days: 200, deleted: 1 }),
      ]),
    );
  });

  it('when the default is the longest, then a Tenant at the default is swept only in the partition of the Events recorded before partitioning, which is dropped only once all of it has expired', async () => {
    const [atDefault, shorter] = [randomUUID(), randomUUID()];
    // A new database's Events of its first days are in that partition too, as these are.
    const expired = newEvent({ tenantId: atDefault, receivedAt: daysAgo(800) });
    const kept = newEvent({ tenantId: atDefault, receivedAt: daysAgo(700) });
    await insertEvents(svc.pool, [
      expired,
      kept,
      newEvent({ tenantId: shorter, receivedAt: daysAgo(40) }),
    ]);
    const { rows } = await svc.pool.query<{ partition: string }>(
      'select distinct tableoid::regclass::text as partition from events where tenant_id = $1',
      [atDefault],
    );
    expect(rows).toEqual([{ partition: 'events_before_partitions' }]);

    const report = await sweepRetention({
      pool: svc.pool,
      retention: settings({ defaultDays: 730, tenants: [{ tenantId: shorter, days: 30 }] }),
    });

    expect(await storedIds(atDefault)).toEqual([kept.id]);
    expect(await storedIds(shorter)).toEqual([]);
    expect(report.tenants.map((t) => [t.tenantId, t.days])).toEqual(
      expect.arrayContaining([
        [shorter, 30],
        [atDefault, 730],
      ]),
    );
  });

  it('when a Tenant has many expired Events, then they go in batches, Events received at one moment and microseconds apart included, and none newer', async () => {
    const tenantId = randomUUID();
    const base = Date.now() - 60 * DAY_MS;
    // Microsecond timestamps PostgreSQL keeps and a Date would cut: 7 Events at one moment (one
    // recording transaction), then 5 inside the same millisecond, then one a day later.
    const moment = (offsetMs: number, micros: string) =>
      `${new Date(base + offsetMs).toISOString().slice(0, 23)}${micros}Z`;
    const expired = [
      ...Array.from({ length: 7 }, () => newEvent({ tenantId, receivedAt: moment(0, '250') })),
      ...['100', '101', '500', '998', '999'].map((micros) =>
        newEvent({ tenantId, receivedAt: moment(1, micros) }),
      ),
      newEvent({ tenantId, receivedAt: moment(DAY_MS, '000') }),
    ];
    const kept = [newEvent({ tenantId, receivedAt: daysAgo(29) })];
    await insertEvents(svc.pool, [...expired, ...kept]);

    const report = await sweepRetention({
      pool: svc.pool,
      retention: settings({ defaultDays: 730, tenants: [{ tenantId, days: 30 }] }),
      batchSize: 3,
    });

    expect(await storedIds(tenantId)).toEqual(idsOf(kept));
    expect(report.tenants.find((t) => t.tenantId === tenantId)?.deleted).toBe(expired.length);
  });

  it('when the settings cannot be read, then nothing is deleted and the sweep fails', async () => {
    const tenantId = randomUUID();
    const old = newEvent({ tenantId, receivedAt: daysAgo(100) });
    await insertEvents(svc.pool, [old]);

    await expect(
      sweepRetention({
        pool: svc.pool,
        retention: () => Promise.reject(new Error('the auth service answered 503')),
      }),
    ).rejects.toThrow('503');

    expect(await storedIds(tenantId)).toEqual([old.id]);
  });

  it('when stopped by its signal, then it deletes nothing more and says it stopped', async () => {
    const tenantId = randomUUID();
    const old = newEvent({ tenantId, receivedAt: daysAgo(100) });
    await insertEvents(svc.pool, [old]);
    const stop = new AbortController();
    stop.abort();

    const report = await sweepRetention({
      pool: svc.pool,
      retention: settings({ defaultDays: 730, tenants: [{ tenantId, days: 30 }] }),
      signal: stop.signal,
    });

    expect(report.stopped).toBe(true);
    expect(await storedIds(tenantId)).toEqual([old.id]);
  });
});

describe('recording while the sweep deletes', () => {
  it('when a delete batch of a Tenant is still uncommitted, then Events of that Tenant and Contact are recorded meanwhile (202), and stay', async () => {
    const { tenantId, token } = svc.newTenant();
    const contact = await svc.contacts.createContact(tenantId);
    const old = Array.from({ length: 50 }, () =>
      newEvent({ tenantId, contactId: contact.id, receivedAt: daysAgo(40) }),
    );
    await insertEvents(svc.pool, old);

    const client = await svc.pool.connect();
    try {
      await client.query('begin');
      const batch = await deleteTenantEventsBatch(client, {
        tenantId,
        after: undefined,
        before: new Date(Date.now() - 30 * DAY_MS),
        batchSize: 100,
      });
      expect(batch.deleted).toBe(50);
      // The delete holds its locks until the commit: a recording that waited for them would
      // never answer while this transaction is open.
      const res = await svc.record('by-contact-id', token, [
        { contactId: contact.id, eventName: 'Logged In', occurredAt: daysAgo(0) },
        { contactId: contact.id, eventName: 'Plan Upgraded', occurredAt: daysAgo(0) },
      ]);
      expect(res.status).toBe(202);
      await client.query('commit');
    } catch (err) {
      await client.query('rollback');
      throw err;
    } finally {
      client.release();
    }

    const { rows } = await svc.pool.query<{ event_name: string }>(
      'select event_name from events where tenant_id = $1 order by event_name',
      [tenantId],
    );
    expect(rows.map((row) => row.event_name)).toEqual(['Logged In', 'Plan Upgraded']);
  });

  it('when Events are recorded for the Tenant all through a sweep of its many expired Events, then every request answers 202 and every recorded Event stays', async () => {
    const { tenantId, token } = svc.newTenant();
    const contact = await svc.contacts.createContact(tenantId);
    const old = Array.from({ length: 6_000 }, (_, i) =>
      newEvent({ tenantId, contactId: contact.id, receivedAt: daysAgo(40 + i / 1000) }),
    );
    await insertEvents(svc.pool, old);

    const statuses: number[] = [];
    const record = async () => {
      const res = await svc.record('by-contact-id', token, {
        contactId: contact.id,
        eventName: 'Page Viewed',
        occurredAt: daysAgo(0),
      });
      statuses.push(res.status);
    };
    // The sweep's statements on the real pool, each delete only once another request has been
    // answered since the previous one: recording is interleaved with every batch, whatever the
    // speed of either.
    let answeredAtLastDelete = 0;
    const pool = {
      query: async (text: string, values?: unknown[]) => {
        if (text.trimStart().startsWith('delete')) {
          await pollUntil(() => Promise.resolve(statuses.length > answeredAtLastDelete), {
            intervalMs: 5,
            what: 'a recording answered since the previous delete',
          });
          answeredAtLastDelete = statuses.length;
        }
        return svc.pool.query(text, values);
      },
    } as unknown as Pool;
    let sweeping = true;
    const recording = (async () => {
      while (sweeping) await record();
    })();
    const report = await sweepRetention({
      pool,
      retention: settings({ defaultDays: 730, tenants: [{ tenantId, days: 30 }] }),
      batchSize: 100,
    }).finally(() => {
      sweeping = false;
    });
    await recording;

    expect(report.tenants.find((t) => t.tenantId === tenantId)?.deleted).toBe(old.length);
    expect(statuses.length).toBeGreaterThan(60);
    expect(new Set(statuses)).toEqual(new Set([202]));
    const { rows } = await svc.pool.query<{ event_name: string }>(
      'select event_name from events where tenant_id = $1',
      [tenantId],
    );
    expect(rows).toHaveLength(statuses.length);
    expect(new Set(rows.map((row) => row.event_name))).toEqual(new Set(['Page Viewed']));
  });
});

describe('the settings from the auth service', () => {
  const overview = {
    defaultDays: 730,
    tenants: [{ tenantId: '0b9d6f0e-95b5-4d3e-9a55-1f7f3c0a0001', days: 30 }],
  };

  async function authStandIn(status: number, body: unknown) {
    const seen: Array<{ path: string | undefined; authorization: string | undefined }> = [];
    const server = await startStandInServer((req, res) => {
      seen.push({ path: req.url, authorization: req.headers.authorization });
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    return { server, seen };
  }

  it('when auth answers 200, then the settings are its answer, asked with the service token on the internal route', async () => {
    const { server, seen } = await authStandIn(200, overview);
    try {
      const source = authRetentionSource({ authUrl: server.url, serviceToken: 'events-token' });
      expect(await source()).toEqual(overview);
      expect(seen).toEqual([
        { path: '/internal/v1/event-retention', authorization: 'Bearer events-token' },
      ]);
    } finally {
      await server.close();
    }
  });

  it.each([
    [503, { code: 'service_unavailable', message: 'down' }],
    [403, { code: 'forbidden', message: 'not this caller' }],
    [200, { defaultDays: 0, tenants: [] }],
    [200, { defaultDays: 730, tenants: [{ tenantId: 'nope', days: 30 }] }],
  ])('when auth answers %p %p, then reading the settings fails', async (status, body) => {
    const { server } = await authStandIn(status, body);
    try {
      const source = authRetentionSource({ authUrl: server.url, serviceToken: 'events-token' });
      await expect(source()).rejects.toThrow();
    } finally {
      await server.close();
    }
  });
});
