// The outbox and the dedup claims stay small under sustained load: a migrated database gives both
// tables the autovacuum settings of 020_side_tables_autovacuum.sql, pruning deletes expired claims
// batch after batch and leaves the live ones, and the relay process's upkeep vacuums the claims
// once enough were pruned. (The outbox's own vacuum is tested with @herald/outbox.)
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { pruneDedupClaims } from '../../src/recording/data/dedup-pruning.js';
import { dedupClaimsUpkeep } from '../../src/recording/dedup-claims-upkeep.js';
import { insertDedupClaim, prepareTestDatabase, testPool } from '../contact-data-support.js';

const DATABASE = 'herald_events_test_side_tables';
const pool = testPool(DATABASE);

/** `count` claims of one Tenant, claimed `secondsAgo` ago, keys `<prefix>-<n>`. */
async function claims(tenantId: string, prefix: string, count: number, secondsAgo: number) {
  for (let i = 0; i < count; i += 1) {
    await insertDedupClaim(pool, {
      tenantId,
      dedupKey: `${prefix}-${i}`,
      eventId: randomUUID(),
      claimedAt: new Date(Date.now() - secondsAgo * 1000).toISOString(),
    });
  }
}

async function keysOf(tenantId: string): Promise<string[]> {
  const { rows } = await pool.query<{ dedup_key: string }>(
    'select dedup_key from dedup_claims where tenant_id = $1 order by dedup_key',
    [tenantId],
  );
  return rows.map((r) => r.dedup_key);
}

/** Manual vacuums of dedup_claims so far (autovacuum's are counted apart). */
async function claimVacuums(): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `select vacuum_count::int as n from pg_stat_user_tables where relname = 'dedup_claims'`,
  );
  return rows[0]!.n;
}

const warnings: string[] = [];
const logger = {
  debug: () => {},
  warn: (_obj: object, msg?: string) => warnings.push(msg ?? ''),
};

beforeAll(async () => {
  await prepareTestDatabase(DATABASE);
  await pool.query('truncate outbox, dedup_claims');
});

afterAll(async () => {
  await pool.end();
});

describe('the side tables', () => {
  test('a migrated database sets the outbox and dedup_claims autovacuum storage parameters', async () => {
    const { rows } = await pool.query<{ relname: string; reloptions: string[] }>(
      `select relname, reloptions from pg_class
        where relname in ('outbox', 'dedup_claims') and relkind = 'r' order by relname`,
    );
    const expected = [
      'autovacuum_vacuum_scale_factor=0',
      'autovacuum_vacuum_threshold=1000',
      'autovacuum_vacuum_cost_delay=0',
    ];
    expect(rows.map((r) => r.relname)).toEqual(['dedup_claims', 'outbox']);
    for (const row of rows) expect([...row.reloptions].sort()).toEqual([...expected].sort());
  });

  test('when more claims expired than one batch holds, then pruning deletes them all, batch after batch, and keeps the claims inside the window', async () => {
    const tenantId = randomUUID();
    await claims(tenantId, 'expired', 23, 120);
    await claims(tenantId, 'live', 2, 10);

    const deleted = await pruneDedupClaims(pool, 60, 5);

    expect(deleted).toBe(23);
    expect(await keysOf(tenantId)).toEqual(['live-0', 'live-1']);
  });

  test('when the upkeep has pruned fewer claims than its vacuum threshold, then it does not vacuum; once it has pruned as many, it does', async () => {
    const tenantId = randomUUID();
    const upkeep = dedupClaimsUpkeep(pool, logger, 10);
    const before = await claimVacuums();

    await claims(tenantId, 'first', 6, 120);
    await upkeep();
    expect(await keysOf(tenantId)).toEqual([]);
    expect(await claimVacuums()).toBe(before);

    await claims(tenantId, 'second', 6, 120);
    await upkeep();
    expect(await keysOf(tenantId)).toEqual([]);
    expect(await claimVacuums()).toBe(before + 1);
    expect(warnings).toEqual([]);
  });
});
