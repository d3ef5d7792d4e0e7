import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  createPool,
  isUniqueViolation,
  MigrationError,
  runMigrations,
  withTransaction,
  type Pool,
} from '../src/index.js';

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

beforeAll(async () => {
  await admin(`create database ${dbName}`);
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  pool = createPool({ connectionString: url.toString(), applicationName: 'db-lib-test' });
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
});
