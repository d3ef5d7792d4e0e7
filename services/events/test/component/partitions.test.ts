// The partitioned `events` table: partitions created ahead by the upkeep, a write never failing for
// want of one (the default partition takes it, the upkeep moves it), dedup, export and erasure
// across partitions, whole partitions dropped past the longest retention, and an upkeep that fails
// while recording goes on. Partitions of 2 s here, so that the clock crosses several boundaries.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import pino from 'pino';
import { pollUntil, TEST_POSTGRES_URL, testDatabaseUrl } from '@herald/testing';
import { listEventPartitions } from '../../src/partitions/data/event-partitions.js';
import {
  runPartitionUpkeep,
  type PartitionUpkeepDeps,
} from '../../src/partitions/partition-upkeep.js';
import { startEventsUpkeep } from '../../src/partitions/upkeep-job.js';
import {
  CONTACT_DATA_SERVICE_TOKEN,
  insertEvents,
  internalPath,
  newEvent,
  parseLines,
  startContactDataRoutes,
} from '../contact-data-support.js';
import { startEventsService, startRecording, type TestEventsService } from '../support.js';

const database = `herald_events_test_partitions_${process.pid}`;
const PARTITION_MS = 2_000;
let svc: TestEventsService;
let upkeep: PartitionUpkeepDeps;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Rows per partition, the default one included. */
async function rowsByPartition(): Promise<Map<string, number>> {
  const { rows } = await svc.pool.query<{ partition: string; n: number }>(
    'select tableoid::regclass::text as partition, count(*)::int as n from events group by 1',
  );
  return new Map(rows.map((r) => [r.partition, r.n]));
}

beforeAll(async () => {
  svc = await startEventsService({ database });
  // A fresh database's first partition holds every Event of its first days; here the upkeep's
  // small partitions start now.
  await svc.pool.query('alter table events detach partition events_before_partitions');
  await svc.pool.query('drop table events_before_partitions');
  upkeep = {
    pool: svc.pool,
    logger: pino({ level: 'silent' }),
    partitionMs: PARTITION_MS,
    ahead: 2,
    longestRetentionMs: async () => undefined,
    lockTimeoutMs: 500,
  };
});

afterAll(async () => {
  await svc.close();
  const admin = new pg.Client({ connectionString: `${TEST_POSTGRES_URL}/postgres` });
  await admin.connect();
  await admin.query(`drop database if exists ${database} with (force)`);
  await admin.end();
});

it('when migrated, then events is partitioned by received_at, with a default partition', async () => {
  const { rows } = await svc.pool.query(
    `select pg_get_partkeydef('events'::regclass) as key,
            exists (select 1 from pg_inherits i join pg_class c on c.oid = i.inhrelid
                    where i.inhparent = 'events'::regclass and c.relname = 'events_default') as d`,
  );
  expect(rows[0]).toEqual({ key: 'RANGE (received_at)', d: true });
});

describe('recording across partition boundaries', () => {
  it('when Events are recorded while the clock crosses boundaries and upkeep runs, then every request is answered 202, every Event is stored once in its own partition, and a dedupKey sent again after a boundary is not recorded twice', async () => {
    const first = await runPartitionUpkeep(upkeep);
    expect(first.ran).toBe(true);
    expect(first.created.length).toBeGreaterThanOrEqual(3);
    const job = startEventsUpkeep({ ...upkeep, intervalMs: 500 });
    const tenant = svc.newTenant();
    const contact = await svc.contacts.createContact(tenant.tenantId, { externalId: 'p-1' });
    const send = (dedupKey?: string) =>
      svc.record('by-contact-id', tenant.token, {
        contactId: contact.id,
        eventName: 'crossed',
        occurredAt: new Date().toISOString(),
        ...(dedupKey ? { dedupKey } : {}),
      });
    const load = startRecording(svc, {
      token: tenant.token,
      contactId: contact.id,
      eventName: 'crossed',
      workers: 3,
    });
    const before = await send('boundary-key');
    await sleep(PARTITION_MS * 3.5);
    const after = await send('boundary-key');
    await load.stop();
    await job.stop();

    expect([before.status, after.status]).toEqual([202, 202]);
    expect(load.sent()).toBeGreaterThan(10);
    expect(Object.fromEntries(load.statuses)).toEqual({ 202: load.sent() });
    const { rows } = await svc.pool.query<{ n: number; keyed: number }>(
      `select count(*)::int as n, count(*) filter (where dedup_key = 'boundary-key')::int as keyed
       from events where tenant_id = $1`,
      [tenant.tenantId],
    );
    expect(rows[0]).toEqual({ n: load.sent() + 1, keyed: 1 });
    const byPartition = await rowsByPartition();
    expect(byPartition.get('events_default')).toBeUndefined();
    expect(byPartition.size).toBeGreaterThanOrEqual(3);
  }, 30_000);

  it('when upkeep has not run past the partitions ahead, then Events land in the default partition, and the next run moves each into its own', async () => {
    const partitions = await listEventPartitions(svc.pool);
    const end = Math.max(...partitions.map((p) => p.to.getTime()));
    await sleep(end - Date.now() + 200);
    const tenant = svc.newTenant();
    const contact = await svc.contacts.createContact(tenant.tenantId, { externalId: 'p-2' });
    for (let i = 0; i < 5; i += 1) {
      const res = await svc.record('by-contact-id', tenant.token, {
        contactId: contact.id,
        eventName: 'late',
        occurredAt: new Date().toISOString(),
      });
      expect(res.status).toBe(202);
    }
    expect((await rowsByPartition()).get('events_default')).toBe(5);

    const run = await runPartitionUpkeep(upkeep);
    expect(run.moved).toBe(5);
    const byPartition = await rowsByPartition();
    expect(byPartition.get('events_default')).toBeUndefined();
    const { rows } = await svc.pool.query<{ n: number }>(
      'select count(*)::int as n from events where tenant_id = $1',
      [tenant.tenantId],
    );
    expect(rows[0]!.n).toBe(5);
  }, 30_000);
});

describe('reading and erasing across partitions', () => {
  it("when a Contact's Events sit in several partitions and the default one, then the export has them all in order, and the erasure removes them from every one", async () => {
    const routes = await startContactDataRoutes(svc.pool);
    try {
      const tenantId = svc.newTenant().tenantId;
      const contactId = crypto.randomUUID();
      const partitions = await listEventPartitions(svc.pool);
      // One Event in each partition, and one far ahead of them all (the default partition).
      const times = [
        ...partitions.map((p) => new Date(p.to.getTime() - 1).toISOString()),
        new Date(Date.now() + 3_600_000).toISOString(),
      ];
      const events = times.map((receivedAt) => newEvent({ tenantId, contactId, receivedAt }));
      await insertEvents(svc.pool, events);
      const auth = { authorization: `Bearer ${CONTACT_DATA_SERVICE_TOKEN}` };
      const exported = await fetch(`${routes.url}${internalPath(tenantId, contactId, 'export')}`, {
        headers: auth,
      });
      expect(exported.status).toBe(200);
      const ids = parseLines(await exported.text()).map(
        (l) => (l as { data: { id: string } }).data.id,
      );
      expect(ids).toEqual(events.map((e) => e.id));

      const erased = await fetch(`${routes.url}${internalPath(tenantId, contactId, 'erase')}`, {
        method: 'POST',
        headers: auth,
      });
      expect(erased.status).toBe(204);
      const { rows } = await svc.pool.query<{ n: number }>(
        'select count(*)::int as n from events where tenant_id = $1',
        [tenantId],
      );
      expect(rows[0]!.n).toBe(0);
    } finally {
      await routes.close();
    }
  });
});

describe('retention and failures', () => {
  it('when partitions are wholly older than the longest retention, then upkeep drops them and their Events are gone, the others kept', async () => {
    const partitions = await listEventPartitions(svc.pool);
    const cutoff = Date.now() - 3_000;
    const old = partitions.filter((p) => p.to.getTime() <= cutoff).map((p) => p.name);
    expect(old.length).toBeGreaterThan(0);
    const run = await runPartitionUpkeep({ ...upkeep, longestRetentionMs: async () => 3_000 });
    expect(run.dropped).toEqual(expect.arrayContaining(old));
    const left = (await listEventPartitions(svc.pool)).map((p) => p.name);
    for (const name of old) expect(left).not.toContain(name);
    const { rows } = await svc.pool.query<{ n: number }>(
      'select count(*)::int as n from events where received_at < $1',
      [new Date(cutoff - PARTITION_MS)],
    );
    expect(rows[0]!.n).toBe(0);
  });

  it('when upkeep cannot take its locks, then the run fails, recording goes on, and the next run catches up', async () => {
    const holder = new pg.Client({ connectionString: testDatabaseUrl(database) });
    await holder.connect();
    await holder.query('begin');
    // Conflicts with attaching a partition, not with recording.
    await holder.query('lock table events in share update exclusive mode');
    const job = startEventsUpkeep({ ...upkeep, intervalMs: 60_000 });
    try {
      await sleep(PARTITION_MS * 2);
      expect(await job.runOnce()).toBeUndefined();
      const tenant = svc.newTenant();
      const contact = await svc.contacts.createContact(tenant.tenantId, { externalId: 'p-3' });
      const res = await svc.record('by-contact-id', tenant.token, {
        contactId: contact.id,
        eventName: 'during_failure',
        occurredAt: new Date().toISOString(),
      });
      expect(res.status).toBe(202);
    } finally {
      await holder.query('rollback');
      await holder.end();
    }
    const run = await job.runOnce();
    await job.stop();
    expect(run?.created.length).toBeGreaterThan(0);
    expect((await rowsByPartition()).get('events_default')).toBeUndefined();
  }, 30_000);

  it('when a run fails after the partitions (the retention sweep, auth away), then it is tried again before the interval', async () => {
    let calls = 0;
    const job = startEventsUpkeep({
      ...upkeep,
      intervalMs: 60_000,
      retryAfterFailureMs: 200,
      afterPartitions: async () => {
        calls += 1;
        if (calls === 1) throw new Error('auth unreachable');
      },
    });
    try {
      await pollUntil(() => Promise.resolve(calls >= 2), {
        timeoutMs: 5_000,
        what: 'the run tried again',
      });
    } finally {
      await job.stop();
    }
    expect(calls).toBe(2);
  });

  it('when two replicas run upkeep at once, then each partition is created once and neither fails', async () => {
    await sleep(PARTITION_MS);
    const runs = await Promise.all([runPartitionUpkeep(upkeep), runPartitionUpkeep(upkeep)]);
    const created = runs.flatMap((r) => r.created);
    expect(new Set(created).size).toBe(created.length);
  });
});
