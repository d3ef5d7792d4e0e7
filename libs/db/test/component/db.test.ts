import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  createPool,
  isUniqueViolation,
  MigrationError,
  pingDatabase,
  runMigrations,
  withStatement,
  withTransaction,
  type Pool,
  type PoolClient,
} from '../../src/index.js';

// Each run gets a scratch database on the real local PostgreSQL, dropped afterwards.
const adminUrl = `${process.env.HERALD_POSTGRES_URL ?? 'postgres://herald@127.0.0.1:55432'}/postgres`;
const dbName = `herald_test_db_${process.pid}_${Date.now()}`;
let pool: Pool;
let dir: string;

async function admin(sql: string) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function databaseUrl(): string {
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  return url.toString();
}

beforeAll(async () => {
  await admin(`create database ${dbName}`);
  pool = createPool({ connectionString: databaseUrl(), applicationName: 'db-lib-test' });
  dir = await mkdtemp(path.join(tmpdir(), 'migrations-'));
});

afterAll(async () => {
  await pool.end();
  await admin(`drop database if exists ${dbName} with (force)`);
  await rm(dir, { recursive: true, force: true });
});

describe('runMigrations', () => {
  it('when run twice, then each file is applied once, in name order', async () => {
    await writeFile(
      path.join(dir, '002_add_column.sql'),
      'alter table things add column label text;',
    );
    await writeFile(path.join(dir, '001_create.sql'), 'create table things (id int primary key);');
    expect(await runMigrations(pool, dir)).toEqual(['001_create.sql', '002_add_column.sql']);
    expect(await runMigrations(pool, dir)).toEqual([]);
    const { rows } = await pool.query('select name from schema_migrations order by name');
    expect(rows.map((r) => r.name)).toEqual(['001_create.sql', '002_add_column.sql']);
  });

  it('when several runners start at once, then every file is still applied exactly once', async () => {
    await writeFile(path.join(dir, '003_more.sql'), 'create table more_things (id int);');
    const results = await Promise.all([
      runMigrations(pool, dir),
      runMigrations(pool, dir),
      runMigrations(pool, dir),
    ]);
    expect(results.flat()).toEqual(['003_more.sql']);
  });

  it('when a migration fails, then nothing of it stays and the error names the file', async () => {
    await writeFile(
      path.join(dir, '004_broken.sql'),
      'create table half (id int); select no_such_function();',
    );
    await expect(runMigrations(pool, dir)).rejects.toThrow(/004_broken.sql failed/);
    const { rows } = await pool.query("select to_regclass('half') as t");
    expect(rows[0].t).toBeNull();
    await rm(path.join(dir, '004_broken.sql'));
  });

  it('when a migration runs longer than the pool statement timeout, then it still completes', async () => {
    const url = new URL(adminUrl);
    url.pathname = `/${dbName}`;
    const strict = createPool({
      connectionString: url.toString(),
      applicationName: 'db-lib-test',
      statementTimeoutMillis: 100,
    });
    try {
      await expect(strict.query('select pg_sleep(0.3)')).rejects.toThrow(/statement timeout/);
      await writeFile(path.join(dir, '005_slow.sql'), 'select pg_sleep(0.3);');
      expect(await runMigrations(strict, dir)).toEqual(['005_slow.sql']);
      await expect(strict.query('select pg_sleep(0.3)')).rejects.toThrow(/statement timeout/);
    } finally {
      await strict.end();
    }
  });

  it('when an applied file is edited, then the runner refuses', async () => {
    await writeFile(
      path.join(dir, '001_create.sql'),
      'create table things (id bigint primary key);',
    );
    await expect(runMigrations(pool, dir)).rejects.toBeInstanceOf(MigrationError);
  });
});

describe('runMigrations on a database in use', () => {
  let liveDir: string;
  const fast = { lockTimeoutMs: 100, retryDelayMs: 50 };

  beforeAll(async () => {
    liveDir = await mkdtemp(path.join(tmpdir(), 'migrations-live-'));
    await writeFile(
      path.join(liveDir, '101_live_create.sql'),
      'create table live_things (id int primary key, label text);',
    );
    await runMigrations(pool, liveDir);
  });

  afterAll(() => rm(liveDir, { recursive: true, force: true }));

  /** Another session holding a lock on live_things that `alter table` must wait for. */
  async function holdTableLock(): Promise<pg.Client> {
    const holder = new pg.Client({ connectionString: databaseUrl() });
    await holder.connect();
    await holder.query('begin');
    await holder.query('lock table live_things in access share mode');
    return holder;
  }

  const applied = async () =>
    (
      await pool.query<{ name: string }>('select name from schema_migrations order by name')
    ).rows.map((r) => r.name);

  it('when a lock is held longer than the lock timeout, then the migration is rolled back, tried again and applied once the lock is free', async () => {
    await writeFile(
      path.join(liveDir, '102_live_add_column.sql'),
      'alter table live_things add column note text;',
    );
    const holder = await holdTableLock();
    const retries: object[] = [];
    const logger = { info: () => {}, warn: (obj: object) => retries.push(obj) };
    const running = runMigrations(pool, liveDir, logger, { ...fast, lockAttempts: 100 });
    await new Promise((resolve) => setTimeout(resolve, 600));
    await holder.query('rollback');
    await holder.end();
    expect(await running).toEqual(['102_live_add_column.sql']);
    expect(retries.length).toBeGreaterThan(0);
    expect(retries[0]).toMatchObject({ migration: '102_live_add_column.sql', attempt: 1 });
    const { rows } = await pool.query(
      "select to_regclass('live_things') as t, count(*)::int as n from information_schema.columns where table_name = 'live_things' and column_name = 'note'",
    );
    expect(rows[0].n).toBe(1);
  });

  it('when the lock stays held through every try, then the runner fails naming the file and records nothing', async () => {
    await writeFile(
      path.join(liveDir, '103_live_drop_column.sql'),
      'alter table live_things drop column note;',
    );
    const holder = await holdTableLock();
    try {
      await expect(
        runMigrations(pool, liveDir, undefined, { ...fast, lockAttempts: 3 }),
      ).rejects.toThrow(/103_live_drop_column.sql failed: .*lock timeout/);
    } finally {
      await holder.query('rollback');
      await holder.end();
    }
    expect(await applied()).not.toContain('103_live_drop_column.sql');
    await rm(path.join(liveDir, '103_live_drop_column.sql'));
  });

  it('when a file says no-transaction, then its statement runs outside one (create index concurrently)', async () => {
    await writeFile(
      path.join(liveDir, '104_live_index.sql'),
      '-- The label index, built without blocking writes.\n-- migrate: no-transaction\n' +
        'create index concurrently if not exists live_things_label on live_things (label);',
    );
    expect(await runMigrations(pool, liveDir)).toEqual(['104_live_index.sql']);
    const { rows } = await pool.query(
      "select indisvalid from pg_index where indexrelid = 'live_things_label'::regclass",
    );
    expect(rows[0].indisvalid).toBe(true);
    expect(await applied()).toContain('104_live_index.sql');
  });

  it('when a no-transaction file says each partition of a table, then its statement runs once per partition, and the parent index attaches them', async () => {
    await pool.query(`create table live_parts (id int not null, at int not null) partition by range (at);
      create table live_parts_a partition of live_parts for values from (0) to (10);
      create table live_parts_b partition of live_parts for values from (10) to (20);
      insert into live_parts values (1, 1), (2, 12);`);
    await writeFile(
      path.join(liveDir, '106_parts_index_parent.sql'),
      'create index if not exists live_parts_id on only live_parts (id);',
    );
    await writeFile(
      path.join(liveDir, '107_parts_index_each.sql'),
      '-- migrate: no-transaction\n-- migrate: each partition of live_parts\n' +
        'create index concurrently if not exists {partition}_id on {partition} (id);',
    );
    await writeFile(
      path.join(liveDir, '108_parts_index_attach.sql'),
      'alter index live_parts_id attach partition live_parts_a_id;\n' +
        'alter index live_parts_id attach partition live_parts_b_id;',
    );
    expect(await runMigrations(pool, liveDir)).toEqual([
      '106_parts_index_parent.sql',
      '107_parts_index_each.sql',
      '108_parts_index_attach.sql',
    ]);
    const { rows } = await pool.query(
      `select c.relname, i.indisvalid from pg_index i join pg_class c on c.oid = i.indexrelid
       where c.relname like 'live_parts%_id' order by 1`,
    );
    expect(rows).toEqual([
      { relname: 'live_parts_a_id', indisvalid: true },
      { relname: 'live_parts_b_id', indisvalid: true },
      { relname: 'live_parts_id', indisvalid: true },
    ]);
  });

  it('when the same statement has no such line, then PostgreSQL refuses it inside the transaction and nothing is recorded', async () => {
    await writeFile(
      path.join(liveDir, '105_live_index.sql'),
      'create index concurrently if not exists live_things_id_label on live_things (id, label);',
    );
    await expect(runMigrations(pool, liveDir)).rejects.toThrow(
      /105_live_index.sql failed: .*cannot run inside a transaction block/,
    );
    expect(await applied()).not.toContain('105_live_index.sql');
    await rm(path.join(liveDir, '105_live_index.sql'));
  });
});

describe('withTransaction', () => {
  it('when the function throws, then its writes are rolled back', async () => {
    await expect(
      withTransaction(pool, async (client) => {
        await client.query('insert into things (id) values (1)');
        throw new Error('stop');
      }),
    ).rejects.toThrow('stop');
    expect((await pool.query('select count(*)::int as n from things')).rows[0].n).toBe(0);
  });

  it('when a unique key is hit, then isUniqueViolation says so', async () => {
    await pool.query('insert into things (id) values (2)');
    const err = await pool.query('insert into things (id) values (2)').catch((e: unknown) => e);
    expect(isUniqueViolation(err)).toBe(true);
    expect(isUniqueViolation(err, 'things_pkey')).toBe(true);
    expect(isUniqueViolation(err, 'other')).toBe(false);
  });

  it('when its connection is lost between two queries (a database restart), then the transaction fails and the process lives on', async () => {
    const killer = new pg.Client({ connectionString: pool.options.connectionString });
    await killer.connect();
    try {
      await expect(
        withTransaction(pool, async (client) => {
          const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
          await killer.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
          // The connection's error arrives while nothing of this client is running.
          await new Promise((resolve) => setTimeout(resolve, 300));
          await client.query('select 1');
        }),
      ).rejects.toThrow();
    } finally {
      await killer.end();
    }
    expect((await pool.query('select 1 as one')).rows[0].one).toBe(1);
  });
});

describe('withTransaction with retryOn', () => {
  // A real PostgreSQL error with the given SQLSTATE, raised inside the transaction.
  const raise = (client: PoolClient, sqlstate: string) =>
    client.query(`do $$ begin raise exception 'raised' using errcode = '${sqlstate}'; end $$`);

  it('when a named failure happens once, then the whole transaction runs again and commits once', async () => {
    await pool.query('create table if not exists retried (id int primary key)');
    let runs = 0;
    const result = await withTransaction(
      pool,
      async (client) => {
        runs += 1;
        await client.query('insert into retried (id) values ($1)', [runs]);
        if (runs === 1) await raise(client, '40001');
        return runs;
      },
      { retryOn: ['serializationFailure'] },
    );
    expect(result).toBe(2);
    const { rows } = await pool.query('select id from retried order by id');
    expect(rows.map((r) => r.id)).toEqual([2]);
  });

  it('when a concurrent insert wins the race, then the loser runs again and sees its row', async () => {
    await pool.query('create table if not exists raced (id int primary key, writer text)');
    const blocker = await pool.connect();
    try {
      await blocker.query('begin');
      await blocker.query("insert into raced (id, writer) values (1, 'first')");
      let runs = 0;
      const loser = withTransaction(
        pool,
        async (client) => {
          runs += 1;
          const { rows } = await client.query('select writer from raced where id = 1');
          if (rows.length > 0) return `found ${String(rows[0].writer)}`;
          // Waits on the uncommitted row, then fails with 23505 once it commits.
          await client.query("insert into raced (id, writer) values (1, 'second')");
          return 'inserted';
        },
        { retryOn: ['uniqueViolation'], attempts: 5 },
      );
      await new Promise((r) => setTimeout(r, 100));
      await blocker.query('commit');
      expect(await loser).toBe('found first');
      expect(runs).toBe(2);
    } finally {
      blocker.release();
    }
  });

  it('when two transactions deadlock, then the one PostgreSQL aborts runs again and both commit', async () => {
    await pool.query('create table if not exists locked (id int primary key, n int not null)');
    await pool.query('insert into locked (id, n) values (1, 0), (2, 0)');
    let runs = 0;
    const crosswise = (first: number, second: number) =>
      withTransaction(
        pool,
        async (client) => {
          runs += 1;
          await client.query('update locked set n = n + 1 where id = $1', [first]);
          await client.query('select pg_sleep(0.2)');
          await client.query('update locked set n = n + 1 where id = $1', [second]);
        },
        { retryOn: ['deadlock'] },
      );
    await Promise.all([crosswise(1, 2), crosswise(2, 1)]);
    expect(runs).toBe(3);
    const { rows } = await pool.query('select n from locked order by id');
    expect(rows.map((r) => r.n)).toEqual([2, 2]);
  });

  it('when the failure is not named, then it is thrown after one run', async () => {
    let runs = 0;
    const failing = withTransaction(
      pool,
      async (client) => {
        runs += 1;
        await raise(client, '23505');
      },
      { retryOn: ['deadlock', 'serializationFailure'] },
    );
    await expect(failing).rejects.toMatchObject({ code: '23505' });
    expect(runs).toBe(1);
  });

  it('when a named failure keeps happening, then the last one is thrown after `attempts` runs', async () => {
    let runs = 0;
    const failing = withTransaction(
      pool,
      async (client) => {
        runs += 1;
        await raise(client, '40P01');
      },
      { retryOn: ['deadlock'], attempts: 4 },
    );
    await expect(failing).rejects.toMatchObject({ code: '40P01' });
    expect(runs).toBe(4);
  });

  it('when retryOn is left out, then nothing is retried', async () => {
    let runs = 0;
    const failing = withTransaction(pool, async (client) => {
      runs += 1;
      await raise(client, '40001');
    });
    await expect(failing).rejects.toMatchObject({ code: '40001' });
    expect(runs).toBe(1);
  });
});

describe('withStatement', () => {
  it("when its one statement fails with a named failure, then it runs again and only the second run's row is written", async () => {
    await pool.query('create table if not exists alone (id int primary key)');
    await pool.query('insert into alone (id) values (1)');
    let runs = 0;
    const result = await withStatement(
      pool,
      async (client) => {
        runs += 1;
        // The first run collides with the existing row; the second writes a free id.
        const { rows } = await client.query<{ id: number }>(
          'insert into alone (id) values ($1) returning id',
          [runs],
        );
        return rows[0]!.id;
      },
      { retryOn: ['uniqueViolation'] },
    );
    expect({ result, runs }).toEqual({ result: 2, runs: 2 });
    const { rows } = await pool.query('select id from alone order by id');
    expect(rows.map((r) => r.id)).toEqual([1, 2]);
  });

  it('when retryOn is left out, then a failure is thrown at once and nothing is written', async () => {
    let runs = 0;
    const failing = withStatement(pool, async (client) => {
      runs += 1;
      await client.query('insert into alone (id) values (1)');
    });
    await expect(failing).rejects.toMatchObject({ code: '23505' });
    expect(runs).toBe(1);
    expect((await pool.query('select count(*)::int as n from alone')).rows[0].n).toBe(2);
  });
});

describe('createPool planOnce', () => {
  /** How ten calls of a named statement that unnests an array were planned, on one connection. */
  async function plansOfTenCalls(planOnce: boolean) {
    const one = createPool({
      connectionString: databaseUrl(),
      applicationName: 'db-lib-plans',
      max: 1,
      planOnce,
    });
    try {
      await one.query('create table if not exists keyed (id int primary key, label text)');
      for (let i = 0; i < 10; i++) {
        await one.query({
          name: 'db-lib-test.keyed-lookup',
          text: 'select k.id, k.label from keyed k where k.id in (select * from unnest($1::int[]))',
          values: [[i, i + 1, i + 2]],
        });
      }
      const { rows } = await one.query(
        `select current_setting('plan_cache_mode') as mode, generic_plans::int, custom_plans::int
         from pg_prepared_statements where name = 'db-lib-test.keyed-lookup'`,
      );
      return rows[0] as { mode: string; generic_plans: number; custom_plans: number };
    } finally {
      await one.end();
    }
  }

  it('when set, then every call runs the one plan made for any values', async () => {
    expect(await plansOfTenCalls(true)).toEqual({
      mode: 'force_generic_plan',
      generic_plans: 10,
      custom_plans: 0,
    });
  });

  it("when left out, then PostgreSQL plans the statement again for each of the first calls' values at least", async () => {
    const plans = await plansOfTenCalls(false);
    expect(plans.mode).toBe('auto');
    expect(plans.custom_plans).toBeGreaterThanOrEqual(5);
  });
});

describe('pingDatabase', () => {
  /** One connection: a query on it leaves none for the ping. */
  const poolOfOne = () =>
    createPool({ connectionString: databaseUrl(), applicationName: 'db-lib-ping', max: 1 });

  async function timed(work: Promise<unknown>): Promise<number> {
    const started = performance.now();
    await work;
    return performance.now() - started;
  }

  it('when every connection is busy but the database answered just now, then it resolves without waiting for one', async () => {
    const busy = poolOfOne();
    try {
      await busy.query('select 1');
      const sleeping = busy.query('select pg_sleep(1.5)');
      expect(await timed(pingDatabase(busy))).toBeLessThan(500);
      await sleeping;
    } finally {
      await busy.end();
    }
  });

  it('when the database has not answered lately, then it asks, behind the busy connection', async () => {
    const busy = poolOfOne();
    try {
      const sleeping = busy.query('select pg_sleep(1)');
      expect(await timed(pingDatabase(busy))).toBeGreaterThan(800);
      await sleeping;
    } finally {
      await busy.end();
    }
  });

  it('when the database is unreachable, then it rejects', async () => {
    const nowhere = createPool({
      connectionString: 'postgres://herald@127.0.0.1:1/none',
      applicationName: 'db-lib-ping',
      connectionTimeoutMillis: 500,
    });
    try {
      await expect(pingDatabase(nowhere)).rejects.toThrow();
    } finally {
      await nowhere.end();
    }
  });
});
