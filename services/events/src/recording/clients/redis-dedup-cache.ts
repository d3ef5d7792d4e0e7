import type { Logger } from '@herald/http';
import { createRedisGuard, type Redis } from '@herald/redis';
import { dedupCacheKey, dedupCacheKeyOfHash } from '../dedup-key.js';
import type { DedupCache } from '../record-events.js';

export interface RedisDedupCacheOptions {
  logger: Logger;
  /** A Redis call slower than this is given up on (PostgreSQL decides). Default 100 ms. */
  timeoutMs?: number;
  /** After a failure, Redis is left alone this long (PostgreSQL decides alone). Default 5 s. */
  cooldownMs?: number;
}

/**
 * The dedup fast path in Redis. Its keys hold a hash of the dedupKey, never the key (see
 * dedup-key.ts); a failure is counted and logged by the guard and answers "unknown".
 */
export function redisDedupCache(redis: Redis, options: RedisDedupCacheOptions): DedupCache {
  const guard = createRedisGuard({
    use: 'dedup',
    operations: ['lookup', 'remember'],
    logger: options.logger,
    fallback: 'PostgreSQL alone decides duplicates',
    timeoutMs: options.timeoutMs,
    cooldownMs: options.cooldownMs,
  });

  return {
    async claimed(tenantId, dedupKeys, hashes) {
      if (dedupKeys.length === 0) return new Set();
      try {
        // One MGET: every key of a Tenant shares its hash tag, so one Cluster slot.
        const values = await guard.run('lookup', () =>
          redis.mGet(
            dedupKeys.map((k, i) =>
              hashes?.[i] === undefined
                ? dedupCacheKey(tenantId, k)
                : dedupCacheKeyOfHash(tenantId, hashes[i]),
            ),
          ),
        );
        return new Set(dedupKeys.filter((_, i) => values[i] !== null && values[i] !== undefined));
      } catch {
        return new Set();
      }
    },

    async remember(tenantId, claims) {
      const live = claims.filter((c) => c.remainingMs >= 1);
      if (live.length === 0) return;
      try {
        // Issued in one tick: the client pipelines them.
        await guard.run('remember', () =>
          Promise.all(
            live.map((c) =>
              redis.set(
                c.dedupKeyHash === undefined
                  ? dedupCacheKey(tenantId, c.dedupKey)
                  : dedupCacheKeyOfHash(tenantId, c.dedupKeyHash),
                c.eventId,
                {
                  expiration: { type: 'PX', value: Math.floor(c.remainingMs) },
                },
              ),
            ),
          ),
        );
      } catch {
        // counted and logged by the guard; PostgreSQL holds the claim
      }
    },
  };
}
