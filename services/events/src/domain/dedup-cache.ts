import type { Logger } from '@herald/http';
import type { Redis } from '@herald/redis';
import { meter } from '@herald/telemetry';
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
  /**
   * After a failure, Redis is left alone this long (PostgreSQL decides alone), so that a Redis
   * that hangs costs one timeout per this period rather than one per request. Default 5 s.
   */
  cooldownMs?: number;
  /** At most one log line per this many ms about Redis failing. Default one minute. */
  logIntervalMs?: number;
}

export function redisDedupCache(redis: Redis, options: RedisDedupCacheOptions): DedupCache {
  const { logger, timeoutMs = 100, cooldownMs = 5_000, logIntervalMs = 60_000 } = options;
  const redisErrors = meter('herald.events').createCounter('dedup.redis_errors', {
    unit: '{error}',
    description: 'Dedup fast-path calls to Redis that failed or timed out (PostgreSQL decided)',
  });
  let lastLoggedAt = -Infinity;
  let resting = -Infinity;

  const usable = () => performance.now() >= resting;

  function failed(operation: string, err: unknown): void {
    redisErrors.add(1, { operation });
    const now = performance.now();
    resting = now + cooldownMs;
    if (now - lastLoggedAt < logIntervalMs) return;
    lastLoggedAt = now;
    logger.warn(
      { err, operation },
      'dedup fast path: Redis failed; PostgreSQL alone decides duplicates (logged at most once a minute)',
    );
  }

  async function bounded<T>(call: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`Redis did not answer in ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([call(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    async claimed(tenantId, dedupKeys) {
      if (dedupKeys.length === 0 || !usable()) return new Set();
      try {
        // One MGET: every key of a Tenant shares its hash tag, so one Cluster slot.
        const values = await bounded(() =>
          redis.mGet(dedupKeys.map((k) => dedupCacheKey(tenantId, k))),
        );
        return new Set(dedupKeys.filter((_, i) => values[i] !== null && values[i] !== undefined));
      } catch (err) {
        failed('lookup', err);
        return new Set();
      }
    },

    async remember(tenantId, claims) {
      const live = claims.filter((c) => c.remainingMs >= 1);
      if (live.length === 0 || !usable()) return;
      try {
        // Issued in one tick: the client pipelines them.
        await bounded(() =>
          Promise.all(
            live.map((c) =>
              redis.set(dedupCacheKey(tenantId, c.dedupKey), c.eventId, {
                expiration: { type: 'PX', value: Math.floor(c.remainingMs) },
              }),
            ),
          ),
        );
      } catch (err) {
        failed('remember', err);
      }
    },
  };
}
