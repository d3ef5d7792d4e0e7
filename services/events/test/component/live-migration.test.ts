// A schema change on a live events database: the expand step of an expand/contract change (a
// nullable column, then its index built concurrently) runs while Events are being recorded and
// while a long read holds the table, and no recording request fails.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createPool, runMigrations, type Pool } from '@herald/db';
import { TEST_POSTGRES_URL, testDatabaseUrl } from '@herald/testing';
import { startEventsService, startRecording, type TestEventsService } from '../support.js';

const database = `herald_events_test_live_${process.pid}`;
/** The service's statements give up after this: a recording queued longer fails. */
const STATEMENT_TIMEOUT_MS = 1_500;
/** The long read: longer than a recording may wait. */
const READ_HOLDS_MS = 3_000;

/** Attaches each partition's index to the parent's, but those a new partition came with. */
const ATTACH_INDEXES = `do $$
declare
  p record;
begin
  for p in select c.oid, c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid
           where i.inhparent = 'events'::regclass loop
    if not exists (select 1 from pg_inherits ii join pg_index x on x.indexrelid = ii.inhrelid
                   where ii.inhparent = 'events_tenant_channel'::regclass
                     and x.indrelid = p.oid) then
      execute format('alter index events_tenant_channel attach partition %I',
                     p.relname || '_tenant_channel');
    end if;
  end loop;
end
$$;`;

let svc: TestEventsService;
let migrationsDir: string;
let migrationPool: Pool;

beforeAll(async () => {
  svc = await startEventsService({ database, statementTimeoutMs: STATEMENT_TIMEOUT_MS });
  migrationPool = createPool({
    connectionString: testDatabaseUrl(database),
    applicationName: 'events-live-migration-test',
    max: 1,
  });
  migrationsDir = await mkdtemp(path.join(tmpdir(), 'events-live-migration-'));
  await writeFile(
    path.join(migrationsDir, '900_expand_add_channel.sql'),
    'alter table events add column channel text;',
  );
  // `events` is partitioned: its index is made on the parent alone, built concurrently on each
  // partition, then each is attached (docs/development.md, "Schema changes on a live system").
  await writeFile(
    path.join(migrationsDir, '901_expand_index_channel.sql'),
    'create index if not exists events_tenant_channel on only events (tenant_id, channel);',
  );
  await writeFile(
    path.join(migrationsDir, '902_expand_index_channel_partitions.sql'),
    '-- migrate: no-transaction\n-- migrate: each partition of events\n' +
      'create index concurrently if not exists {partition}_tenant_channel on {partition} (tenant_id, channel);',
  );
  await writeFile(path.join(migrationsDir, '903_expand_index_channel_attach.sql'), ATTACH_INDEXES);
});

afterAll(async () => {
  await svc.close();
  await migrationPool.end();
  await rm(migrationsDir, { recursive: true, force: true });
  const admin = new pg.Client({ connectionString: `${TEST_POSTGRES_URL}/postgres` });
  await admin.connect();
  await admin.query(`drop database if exists ${database} with (force)`);
  await admin.end();
});

it('when a column and its index are added while Events are recorded and a long read holds the table, then every request is answered 202 and every Event is stored', async () => {
  const tenant = svc.newTenant();
  const contact = await svc.contacts.createContact(tenant.tenantId, { externalId: 'live-1' });
  // 100 requests/s, the key's sustained rate budget: a request every 40 ms from each of four
  // loops, which queue behind the migration's lock if it makes recording wait.
  const load = startRecording(svc, {
    token: tenant.token,
    contactId: contact.id,
    eventName: 'live_migration',
    pauseMs: 40,
  });

  // A report reading the table: `alter table` must wait for it, and without a lock timeout
  // every recording after it would queue behind the waiting `alter table`.
  const reader = new pg.Client({ connectionString: testDatabaseUrl(database) });
  await reader.connect();
  await reader.query('begin');
  await reader.query('select count(*) from events');
  const released = new Promise<void>((resolve) =>
    setTimeout(() => {
      void reader.query('commit').then(() => resolve());
    }, READ_HOLDS_MS),
  );

  const retries: object[] = [];
  const applied = await runMigrations(
    migrationPool,
    migrationsDir,
    { info: () => {}, warn: (obj) => retries.push(obj) },
    { lockTimeoutMs: 200, retryDelayMs: 100, lockAttempts: 100 },
  );
  await released;
  await reader.end();
  await new Promise((resolve) => setTimeout(resolve, 500));
  await load.stop();
  const sent = load.sent();

  expect(applied).toEqual([
    '900_expand_add_channel.sql',
    '901_expand_index_channel.sql',
    '902_expand_index_channel_partitions.sql',
    '903_expand_index_channel_attach.sql',
  ]);
  expect(retries.length).toBeGreaterThan(0);
  expect(Object.fromEntries(load.statuses)).toEqual({ 202: sent });
  const { rows } = await svc.pool.query<{ n: number }>(
    'select count(*)::int as n from events where tenant_id = $1',
    [tenant.tenantId],
  );
  expect(rows[0]!.n).toBe(sent);
  const index = await svc.pool.query<{ indisvalid: boolean }>(
    "select indisvalid from pg_index where indexrelid = 'events_tenant_channel'::regclass",
  );
  expect(index.rows[0]!.indisvalid).toBe(true);
}, 60_000);
