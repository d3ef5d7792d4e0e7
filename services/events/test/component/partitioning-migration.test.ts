// Migrating a populated `events` table to the partitioned one (migrations 009 to 012) while Events
// are being recorded: no request fails, no Event is lost or doubled, and the old rows become the
// partition of everything before the first partition without being copied.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createPool, runMigrations, type Pool } from '@herald/db';
import { TEST_POSTGRES_URL, testDatabaseUrl } from '@herald/testing';
import { startEventsService, startRecording, type TestEventsService } from '../support.js';

const database = `herald_events_test_partitioning_${process.pid}`;
const MIGRATIONS = fileURLToPath(new URL('../../migrations', import.meta.url));
const EXISTING_ROWS = 50_000;
let svc: TestEventsService;
let beforeDir: string;
let migrationPool: Pool;

beforeAll(async () => {
  // The database as the release before partitioning left it, with the function this code calls
  // on every recording (migration 022): a release's migrations run before its replicas start.
  beforeDir = await mkdtemp(path.join(tmpdir(), 'events-before-partitions-'));
  for (const file of await readdir(MIGRATIONS)) {
    if (file < '009' || file === '022_batch_deadline.sql') {
      await cp(path.join(MIGRATIONS, file), path.join(beforeDir, file));
    }
  }
  svc = await startEventsService({ database, migrationsDir: beforeDir });
  migrationPool = createPool({
    connectionString: testDatabaseUrl(database),
    applicationName: 'events-partitioning-test',
    max: 1,
  });
});

afterAll(async () => {
  await svc.close();
  await migrationPool.end();
  await rm(beforeDir, { recursive: true, force: true });
  const admin = new pg.Client({ connectionString: `${TEST_POSTGRES_URL}/postgres` });
  await admin.connect();
  await admin.query(`drop database if exists ${database} with (force)`);
  await admin.end();
});

it('when a populated events table is partitioned while Events are recorded, then every request is answered 202 and every Event is there once', async () => {
  const old = svc.newTenant();
  await svc.pool.query(
    `insert into events (id, tenant_id, contact_id, event_name, occurred_at, received_at)
     select gen_random_uuid(), $1, gen_random_uuid(), 'old', now(), now() - g * interval '1 minute'
     from generate_series(1, $2) as g`,
    [old.tenantId, EXISTING_ROWS],
  );
  const tenant = svc.newTenant();
  const contact = await svc.contacts.createContact(tenant.tenantId, { externalId: 'mig-1' });
  const load = startRecording(svc, {
    token: tenant.token,
    contactId: contact.id,
    eventName: 'during_partitioning',
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const applied = await runMigrations(migrationPool, MIGRATIONS, undefined, {
    lockTimeoutMs: 500,
    retryDelayMs: 100,
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  await load.stop();
  const sent = load.sent();

  expect(applied.slice(0, 4)).toEqual([
    '009_events_partition_bound.sql',
    '010_events_partition_bound_validate.sql',
    '011_events_id_received_at_key.sql',
    '012_events_partitioned.sql',
  ]);
  expect(Object.fromEntries(load.statuses)).toEqual({ 202: sent });
  const { rows } = await svc.pool.query<{ tenant_id: string; n: number; ids: number }>(
    `select tenant_id, count(*)::int as n, count(distinct id)::int as ids from events
     where tenant_id = any($1) group by 1`,
    [[old.tenantId, tenant.tenantId]],
  );
  const counts = Object.fromEntries(rows.map((r) => [r.tenant_id, [r.n, r.ids]]));
  expect(counts).toEqual({
    [old.tenantId]: [EXISTING_ROWS, EXISTING_ROWS],
    [tenant.tenantId]: [sent, sent],
  });
  const partitions = await svc.pool.query<{ partition: string; n: number }>(
    'select tableoid::regclass::text as partition, count(*)::int as n from events group by 1',
  );
  expect(partitions.rows).toEqual([
    { partition: 'events_before_partitions', n: EXISTING_ROWS + sent },
  ]);
}, 60_000);
