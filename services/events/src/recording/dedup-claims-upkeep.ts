import type { Pool } from '@herald/db';
import { mayVacuumDedupClaims, pruneDedupClaims, vacuumDedupClaims } from './data/dedup-pruning.js';

/**
 * Claims pruned after which the table is vacuumed: it then holds the live window and about this
 * many dead claims at most, whatever the rate (the outbox relay's own bound is the same).
 */
export const VACUUM_AFTER_PRUNED_CLAIMS = 20_000;

export interface UpkeepLogger {
  debug(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/**
 * The relay process's dedup-claim job, one run per call: deletes the expired claims, then
 * vacuums the table once `vacuumAfterRows` were deleted since its last vacuum (0: never; a
 * database user that may not vacuum it is told once and left to autovacuum). Never throws: a
 * failure is logged and the next run tries again.
 */
export function dedupClaimsUpkeep(
  pool: Pool,
  logger: UpkeepLogger,
  vacuumAfterRows = VACUUM_AFTER_PRUNED_CLAIMS,
): () => Promise<void> {
  let sinceVacuum = 0;
  let mayVacuum: boolean | undefined;
  return async () => {
    try {
      const deleted = await pruneDedupClaims(pool);
      sinceVacuum += deleted;
      if (deleted > 0) logger.debug({ deleted }, 'expired dedup claims deleted');
    } catch (err) {
      logger.warn({ err }, 'could not delete expired dedup claims; trying again later');
      return;
    }
    if (vacuumAfterRows <= 0 || sinceVacuum < vacuumAfterRows || mayVacuum === false) return;
    try {
      if (mayVacuum === undefined) {
        mayVacuum = await mayVacuumDedupClaims(pool);
        if (!mayVacuum) {
          logger.warn(
            {},
            'the relay may not vacuum dedup_claims (its database user owns neither the table nor the database): autovacuum alone cleans it',
          );
          return;
        }
      }
      sinceVacuum = 0;
      await vacuumDedupClaims(pool);
    } catch (err) {
      logger.warn({ err }, 'could not vacuum dedup_claims; autovacuum will');
    }
  };
}
