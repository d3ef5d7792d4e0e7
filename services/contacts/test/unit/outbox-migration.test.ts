import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { OUTBOX_RELAYS_TABLE_SQL, OUTBOX_TABLE_SQL } from '@herald/outbox';
import { sqlStatements } from '@herald/testing';

// The outbox library never runs DDL: each service pastes its table into a migration, and the
// relay and enqueue rely on exactly that table.
describe('the outbox migration', () => {
  it('when compared with the outbox library, then it creates the same table and index', async () => {
    const migration = await readFile(
      new URL('../../migrations/002_outbox.sql', import.meta.url),
      'utf8',
    );
    expect(sqlStatements(migration)).toEqual(sqlStatements(OUTBOX_TABLE_SQL));
  });

  it('when compared with the outbox library, then it creates the same relays table', async () => {
    const migration = await readFile(
      new URL('../../migrations/007_outbox_relays.sql', import.meta.url),
      'utf8',
    );
    expect(sqlStatements(migration)).toEqual(sqlStatements(OUTBOX_RELAYS_TABLE_SQL));
  });
});
