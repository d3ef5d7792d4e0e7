// src/data/sql/functions.sql claims to be what the migrations add up to: every function of a
// migrated database, defined the same way, and no other. Both are built here and compared as
// PostgreSQL itself prints them.
import { describe, expect, it } from '@jest/globals';
import { fileURLToPath } from 'node:url';
import { prepareTestDatabase, sqlFunctionsOf, sqlFunctionsOfFile } from '@herald/testing';

const MIGRATED = 'herald_contacts_test_sql_migrated';
const FILE = new URL('../../src/data/sql/functions.sql', import.meta.url);

describe('the SQL functions the service calls', () => {
  it('when the migrations have run, then the database has exactly the functions of functions.sql, defined alike', async () => {
    await prepareTestDatabase({
      database: MIGRATED,
      migrationsDir: fileURLToPath(new URL('../../migrations', import.meta.url)),
      applicationName: 'contacts-test',
    });
    const expected = await sqlFunctionsOfFile('herald_contacts_test_sql_file', FILE);
    const actual = await sqlFunctionsOf(MIGRATED);

    expect(actual.map(({ name, args }) => `${name}(${args})`)).toEqual(
      expected.map(({ name, args }) => `${name}(${args})`),
    );
    expect(actual).toEqual(expected);
  });
});
