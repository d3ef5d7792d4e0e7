import type { Pool } from '@herald/db';
import { DEDUP_WINDOW_SECONDS } from '../dedup-key.js';

/**
 * Claims deleted per statement: each statement is its own short transaction, so a recording that
 * takes an expired key again (its claim row is locked by the delete) waits for one batch at most.
 */
export const PRUNE_BATCH_ROWS = 5_000;

/**
 * Deletes the dedup claims older than the window: they no longer stop anything, and a recording
 * may take their key again anyway. Batches of `batchRows`, oldest first over
 * `dedup_claims_claimed_at_idx`, until one finds fewer; a claim taken again meanwhile (its
 * `claimed_at` renewed) is left. Several relay replicas running it at once only find less to
 * delete. Returns how many it deleted.
 */
export async function pruneDedupClaims(
  pool: Pool,
  windowSeconds = DEDUP_WINDOW_SECONDS,
  batchRows = PRUNE_BATCH_ROWS,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const result = await pool.query(
      `delete from dedup_claims d
        using (select tenant_id, dedup_key from dedup_claims
                where claimed_at < now() - make_interval(secs => $1)
                order by claimed_at
                limit $2) expired
        where d.tenant_id = expired.tenant_id and d.dedup_key = expired.dedup_key
          and d.claimed_at < now() - make_interval(secs => $1)`,
      [windowSeconds, batchRows],
    );
    const rows = result.rowCount ?? 0;
    deleted += rows;
    if (rows < batchRows) return deleted;
  }
}

// A user that owns the table or the database may vacuum it; one that only reads and writes
// cannot (VACUUM would warn and do nothing each time) and leaves it to autovacuum.
const MAY_VACUUM_SQL = `select pg_has_role(c.relowner, 'USAGE')
         or pg_has_role((select datdba from pg_database where datname = current_database()), 'USAGE')
         as may
  from pg_class c where c.oid = 'dedup_claims'::regclass`;

/** Whether this database user may vacuum `dedup_claims`. */
export async function mayVacuumDedupClaims(pool: Pool): Promise<boolean> {
  const { rows } = await pool.query<{ may: boolean }>(MAY_VACUUM_SQL);
  return rows[0]?.may === true;
}

/**
 * Vacuums `dedup_claims`, so that the space of the claims just pruned holds the next ones rather
 * than new pages: autovacuum comes by at most once a minute, and at thousands of Events a second
 * the table and its primary key would grow to hold that minute's dead claims besides the live
 * ones. SKIP_LOCKED: when autovacuum or another replica vacuums it already, that is enough. On a
 * connection of its own without the pool's statement timeout (meant for requests): a pass over a
 * table that a long transaction let grow may take longer, and cancelling it would only leave the
 * work to autovacuum. The connection gets the timeout back before it returns to the pool.
 */
export async function vacuumDedupClaims(pool: Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('set statement_timeout = 0');
    await client.query('vacuum (skip_locked) dedup_claims');
  } finally {
    await client.query('reset statement_timeout').then(
      () => client.release(),
      (err: unknown) => client.release(err instanceof Error ? err : new Error(String(err))),
    );
  }
}
