import type { Logger } from '@herald/http';
import { createRedisGuard, type Redis } from '@herald/redis';
import { dedupCacheKey } from './dedup-key.js';

/** A dedup claim committed to PostgreSQL, for the fast path to remember. */
export interface CommittedClaim {
  dedupKey: string;
  eventId: string;
  /** How long the claim still holds (its window's end), in ms. */
  remainingMs: number;
}

/**
 * The dedup fast path. It only ever holds claims PostgreSQL committed, so a key it knows is
 * certainly a duplicate; a key it does not know is decided by PostgreSQL, which stays the
 * authority. Its Redis keys hold a hash of the dedupKey, never the key (see dedup-key.ts).
 * Any failure (Redis away, slow, failing) answers "unknown" and is never an error.
 */
export interface DedupCache {
  /** The keys among `dedupKeys` that are certainly claimed in the Tenant right now. */
  claimed(tenantId: string, dedupKeys: readonly string[]): Promise<Set<string>>;
  /** Remembers claims just committed until their window ends. Best effort. */
  remember(tenantId: string, claims: readonly CommittedClaim[]): Promise<void>;
}

export interface RedisDedupCacheOptions {
  logger: Logger;
  /** A Redis call slower than this is given up on (PostgreSQL decides). Default 100 ms. */
  timeoutMs?: number;
  /** After a failure, Redis is left alone this long (PostgreSQL decides alone). Default 5 s. */
  cooldownMs?: number;
}

export function redisDedupCache(redis: Redis, options: RedisDedupCacheOptions): DedupCache {
  const guard = createRedisGuard({
    use: 'dedup',
    logger: options.logger,
    fallback: 'PostgreSQL alone decides duplicates',
    timeoutMs: options.timeoutMs,
    cooldownMs: options.cooldownMs,
  });

  return {
    async claimed(tenantId, dedupKeys) {
      if (dedupKeys.length === 0) return new Set();
      try {
        // One MGET: every key of a Tenant shares its hash tag, so one Cluster slot.
        const values = await guard.run('lookup', () =>
          redis.mGet(dedupKeys.map((k) => dedupCacheKey(tenantId, k))),
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
              redis.set(dedupCacheKey(tenantId, c.dedupKey), c.eventId, {
                expiration: { type: 'PX', value: Math.floor(c.remainingMs) },
              }),
            ),
          ),
        );
      } catch {
        // counted and logged by the guard; PostgreSQL holds the claim
      }
    },
  };
}
