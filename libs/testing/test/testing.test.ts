import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createPool } from '@herald/db';
import {
  createTestSigner,
  createTestVerifier,
  prepareTestDatabase,
  signTestAccessToken,
  sqlStatements,
  TEST_POSTGRES_URL,
} from '../src/index.js';

describe('test token signer', () => {
  it('when a token is signed, then a verifier with the signer as its local key set accepts it', async () => {
    const signer = createTestSigner();
    const tenantId = randomUUID();
    const claims = await createTestVerifier(signer).verify(
      signTestAccessToken(signer, tenantId, ['contacts:read', 'events:write']),
    );
    expect(claims.tenantId).toBe(tenantId);
    expect([...claims.scopes].sort()).toEqual(['contacts:read', 'events:write']);
  });

  it('when a token is signed by another key, then the verifier rejects it', async () => {
    const token = signTestAccessToken(createTestSigner(), randomUUID());
    await expect(createTestVerifier(createTestSigner()).verify(token)).rejects.toThrow();
  });
});

describe('prepareTestDatabase', () => {
  const database = 'herald_testing_lib_test';
  let migrationsDir: string;
  const count = async () => {
    const pool = createPool({
      connectionString: `${TEST_POSTGRES_URL}/${database}`,
      applicationName: 'testing-lib-test',
      max: 1,
    });
    try {
      return (await pool.query<{ n: number }>('select count(*)::int as n from things')).rows[0]!.n;
    } finally {
      await pool.end();
    }
  };

  beforeAll(async () => {
    migrationsDir = await mkdtemp(path.join(tmpdir(), 'herald-testing-'));
    await writeFile(
      path.join(migrationsDir, '001_things.sql'),
      'create table things (id int primary key); insert into things values (1);',
    );
  });
  afterAll(async () => {
    await rm(migrationsDir, { recursive: true, force: true });
    const admin = createPool({
      connectionString: `${TEST_POSTGRES_URL}/postgres`,
      applicationName: 'testing-lib-test',
      max: 1,
    });
    try {
      await admin.query(`drop database if exists "${database}" with (force)`);
    } finally {
      await admin.end();
    }
  });

  it('when run twice, then the database is migrated once; when a migration changed, then it is built again', async () => {
    await prepareTestDatabase({ database, migrationsDir });
    await prepareTestDatabase({ database, migrationsDir });
    expect(await count()).toBe(1);

    await writeFile(
      path.join(migrationsDir, '001_things.sql'),
      'create table things (id int primary key); insert into things values (1), (2);',
    );
    await prepareTestDatabase({ database, migrationsDir });
    expect(await count()).toBe(2);
  });
});

describe('sqlStatements', () => {
  it('when two DDL texts differ only in comments and layout, then their statements are equal', () => {
    const commented = `-- a table
create table t (
  id int primary key,   -- the key
  v text
);
create index t_v on t (v);
`;
    expect(sqlStatements(commented)).toEqual([
      'create table t (id int primary key, v text)',
      'create index t_v on t (v)',
    ]);
    expect(
      sqlStatements('create table t (id int primary key,v text);create index t_v on t (v)'),
    ).toEqual(sqlStatements(commented));
    expect(sqlStatements('create table t (id bigint primary key, v text)')).not.toEqual(
      sqlStatements(commented),
    );
  });
});
