import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createPool } from '@herald/db';
import { prepareTestDatabase, testDatabaseUrl } from '../../src/index.js';

const dropDatabase = async (database: string) => {
  const admin = createPool({
    connectionString: testDatabaseUrl('postgres'),
    applicationName: 'testing-lib-test',
    max: 1,
  });
  try {
    await admin.query(`drop database if exists "${database}" with (force)`);
  } finally {
    await admin.end();
  }
};

const countThings = async (database: string) => {
  const pool = createPool({
    connectionString: testDatabaseUrl(database),
    applicationName: 'testing-lib-test',
    max: 1,
  });
  try {
    return (await pool.query<{ n: number }>('select count(*)::int as n from things')).rows[0]!.n;
  } finally {
    await pool.end();
  }
};

describe('prepareTestDatabase', () => {
  const database = 'herald_testing_lib_test';
  let migrationsDir: string;

  beforeAll(async () => {
    migrationsDir = await mkdtemp(path.join(tmpdir(), 'herald-testing-'));
    await writeFile(
      path.join(migrationsDir, '001_things.sql'),
      'create table things (id int primary key); insert into things values (1);',
    );
  });
  afterAll(async () => {
    await rm(migrationsDir, { recursive: true, force: true });
    await dropDatabase(database);
  });

  it('when run twice, then the database is migrated once; when a migration changed, then it is built again', async () => {
    await prepareTestDatabase({ database, migrationsDir });
    await prepareTestDatabase({ database, migrationsDir });
    expect(await countThings(database)).toBe(1);

    await writeFile(
      path.join(migrationsDir, '001_things.sql'),
      'create table things (id int primary key); insert into things values (1), (2);',
    );
    await prepareTestDatabase({ database, migrationsDir });
    expect(await countThings(database)).toBe(2);
  });
});

describe('prepareTestDatabase with a migration of its own', () => {
  const database = 'herald_testing_lib_test_own';
  afterAll(() => dropDatabase(database));

  it('when the migration says a migration changed after it was applied, then the database is built again and migrated once more', async () => {
    await dropDatabase(database);
    const migrated: string[] = [];
    const migrate = (changed: boolean) => async (databaseUrl: string) => {
      migrated.push(databaseUrl);
      const pool = createPool({
        connectionString: databaseUrl,
        applicationName: 'testing-lib-test',
      });
      try {
        const { rowCount } = await pool.query(
          "select 1 from pg_tables where schemaname = 'public' and tablename = 'things'",
        );
        if (rowCount === 1 && changed) {
          throw new Error('migration 001_things.sql changed after it was applied');
        }
        await pool.query(
          'create table if not exists things (id int primary key); insert into things values (1) on conflict do nothing',
        );
      } finally {
        await pool.end();
      }
    };

    await prepareTestDatabase({ database, migrate: migrate(false) });
    await prepareTestDatabase({ database, migrate: migrate(true) });

    expect(migrated).toEqual(Array(3).fill(testDatabaseUrl(database)));
    expect(await countThings(database)).toBe(1);
  });

  it('when the migration fails otherwise, then the failure is thrown', async () => {
    await expect(
      prepareTestDatabase({
        database,
        migrate: () => Promise.reject(new Error('migrate.js exited 1')),
      }),
    ).rejects.toThrow('migrate.js exited 1');
  });
});
