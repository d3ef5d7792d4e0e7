// src/data/sql/functions.sql claims to be what the migrations add up to: every function of a
// migrated database, defined the same way, and no other. Both are built here and compared as
// PostgreSQL itself prints them.
import { describe, expect, it } from '@jest/globals';
import { sqlFunctionsOf, sqlFunctionsOfFile } from '@herald/testing';
import { prepareDatabase } from './support.js';

const MIGRATED = 'herald_events_test_sql_migrated';
const FILE = new URL('../src/data/sql/functions.sql', import.meta.url);

describe('the SQL functions the service calls', () => {
  it('when the migrations have run, then the database has exactly the functions of functions.sql, defined alike', async () => {
    await prepareDatabase(MIGRATED);
    const expected = await sqlFunctionsOfFile('herald_events_test_sql_file', FILE);
    const actual = await sqlFunctionsOf(MIGRATED);

    expect(actual.map(({ name, args }) => `${name}(${args})`)).toEqual(
      expected.map(({ name, args }) => `${name}(${args})`),
    );
    expect(actual).toEqual(expected);
    // The one record-batch.ts calls: the overload that took each claim's hash twice is gone.
    expect(actual.filter((f) => f.name === 'record_events_batch')).toHaveLength(1);
  });
});
