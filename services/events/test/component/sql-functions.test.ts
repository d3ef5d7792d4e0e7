// src/sql/functions.sql claims to be what the migrations add up to: every function of a
// migrated database, defined the same way, and no other. Both are built here and compared as
// PostgreSQL itself prints them.
import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { sqlFunctionsOf, sqlFunctionsOfFile } from '@herald/testing';
import { BATCH_PARAMETERS } from '../../src/recording/data/record-batch.js';
import { prepareDatabase } from '../support.js';

const MIGRATED = 'herald_events_test_sql_migrated';
const FILE = new URL('../../src/sql/functions.sql', import.meta.url);

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

  it.each(['record_events_batch', 'record_events_batch_at_once'])(
    'when %s is called, then its parameters are those functions.sql declares, in order and type',
    async (name) => {
      const sql = await readFile(FILE, 'utf8');
      const declared = new RegExp(`create or replace function ${name}\\(([^)]*)\\)`).exec(sql);
      const parameters = declared![1]!.split(',').map((p) => p.trim().replace(/\s+/g, ' '));

      expect(parameters).toEqual(BATCH_PARAMETERS.map((p) => `${p.name} ${p.type}`));
    },
  );
});
