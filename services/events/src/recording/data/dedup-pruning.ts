import type { Pool } from '@herald/db';
import { DEDUP_WINDOW_SECONDS } from '../dedup-key.js';

/**
 * Deletes the dedup claims older than the window: they no longer stop anything, and a recording
 * may take their key again anyway. One statement over `dedup_claims_claimed_at_idx`; several
 * relay replicas running it at once only find less to delete. Returns how many it deleted.
 */
export async function pruneDedupClaims(
  pool: Pool,
  windowSeconds = DEDUP_WINDOW_SECONDS,
): Promise<number> {
  const result = await pool.query(
    `delete from dedup_claims where claimed_at < now() - make_interval(secs => $1)`,
    [windowSeconds],
  );
  return result.rowCount ?? 0;
}
