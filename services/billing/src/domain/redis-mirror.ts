import type { Pool } from '@herald/db';
import type { Logger } from '@herald/http';
import { storeSubscriptionState, subscriptionKey } from '@herald/policy';
import { createRedisGuard, type Redis } from '@herald/redis';
import {
  findBehindRedis,
  markAllBehindRedis,
  markSyncedToRedis,
  type SubscriptionRow,
} from '../data/subscriptions-repository.js';

/**
 * The Redis copy of the subscription state, which every service reads on every write. PostgreSQL
 * is the source of truth; Redis may be away, flushed or restarted with old data, so:
 * - a change is written at once (`store`, best effort: a failure only delays it);
 * - a loop rewrites every row Redis is behind on, every `intervalMs`, until it succeeds;
 * - after any disconnect every row counts as behind, since the Redis that comes back may
 *   hold older data (a restart from an old snapshot) or none.
 * The Lua script of @herald/policy only ever replaces a snapshot with a newer one, so writers
 * (the change, this loop, another replica) can race freely.
 */
export interface SubscriptionMirror {
  /** Writes the snapshot now; false (logged, counted) when Redis failed. Never rejects. */
  store(row: SubscriptionRow): Promise<boolean>;
  /**
   * Removes a deleted Tenant's copy, which has no expiry; rejects when Redis fails, so that the
   * deletion is tried again rather than leaving the copy behind.
   */
  forget(tenantId: string): Promise<void>;
  /** One pass of the loop: rewrites what Redis is behind on; resolves with how many. */
  syncOnce(): Promise<number>;
  /** Runs the loop in the background until `stop`. */
  start(): void;
  /** Lets the pass in flight finish, then resolves. */
  stop(): Promise<void>;
}

export interface SubscriptionMirrorOptions {
  pool: Pool;
  redis: Redis;
  logger: Logger;
  /** Between passes of the sync loop. Default 1 s. */
  intervalMs?: number;
  /** A Redis call slower than this counts as failed. Default 500 ms. */
  timeoutMs?: number;
  /** Rows per query and pipelined batch. Default 500. */
  batchSize?: number;
}

/** The events a client emits when its connection is lost (single node, then Cluster). */
const CONNECTION_LOST_EVENTS = [
  'error',
  'end',
  'reconnecting',
  'node-error',
  'node-disconnect',
  'node-reconnecting',
];

export function createSubscriptionMirror(options: SubscriptionMirrorOptions): SubscriptionMirror {
  const { pool, redis, logger, intervalMs = 1_000, timeoutMs = 500, batchSize = 500 } = options;
  const guard = createRedisGuard({
    use: 'subscription',
    operations: ['store'],
    logger,
    fallback: 'PostgreSQL committed the change; the sync loop writes it once Redis answers',
    timeoutMs,
    // Shorter than a pass, so every pass of the loop tries Redis again.
    cooldownMs: Math.min(intervalMs / 2, 5_000),
  });

  // Starts true: what Redis holds from before this process started is unknown.
  let connectionLost = true;
  // Bumped on every loss, so a write that was in flight across one is not taken as synced.
  let connectionEpoch = 0;
  const onLost = () => {
    connectionLost = true;
    connectionEpoch += 1;
  };
  const emitter = redis as unknown as { on(event: string, listener: () => void): unknown };
  for (const event of CONNECTION_LOST_EVENTS) emitter.on(event, onLost);

  const write = (row: SubscriptionRow) =>
    guard.run('store', () =>
      storeSubscriptionState(redis, row.tenantId, {
        state: row.state,
        consecutiveFailures: row.consecutiveFailures,
        version: row.version,
      }),
    );

  async function syncOnce(): Promise<number> {
    if (connectionLost) {
      connectionLost = false;
      try {
        const marked = await markAllBehindRedis(pool);
        if (marked > 0) logger.info({ rows: marked }, 'Redis connection was lost: re-syncing');
      } catch (err) {
        connectionLost = true;
        throw err;
      }
    }
    let written = 0;
    for (;;) {
      const rows = await findBehindRedis(pool, batchSize);
      const epoch = connectionEpoch;
      // Issued in one tick: the client pipelines them.
      const results = await Promise.allSettled(rows.map(write));
      const stored = rows.filter((_, i) => results[i]!.status === 'fulfilled');
      if (epoch === connectionEpoch) await markSyncedToRedis(pool, stored);
      written += stored.length;
      const failure = results.find((r) => r.status === 'rejected');
      if (failure) throw failure.reason;
      if (rows.length < batchSize) return written;
    }
  }

  let loop: Promise<void> | undefined;
  let stopping = false;
  let wake: (() => void) | undefined;

  async function run(): Promise<void> {
    let failingSince: number | undefined;
    while (!stopping) {
      try {
        const written = await syncOnce();
        if (failingSince !== undefined) {
          logger.info(
            { downForMs: Date.now() - failingSince, written },
            'subscription mirror caught up with Redis',
          );
          failingSince = undefined;
        }
      } catch (err) {
        // Redis failures are logged (rarely) by the guard; a PostgreSQL failure once here.
        if (failingSince === undefined) {
          failingSince = Date.now();
          logger.warn({ err }, 'subscription mirror is behind; retrying every pass');
        }
      }
      if (stopping) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, intervalMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  }

  return {
    async store(row) {
      try {
        await write(row);
        return true;
      } catch {
        return false;
      }
    },
    async forget(tenantId) {
      let timer: NodeJS.Timeout | undefined;
      const tooSlow = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`Redis did not answer within ${timeoutMs} ms`)),
          timeoutMs,
        );
      });
      try {
        await Promise.race([redis.del(subscriptionKey(tenantId)), tooSlow]);
      } finally {
        clearTimeout(timer);
      }
    },
    syncOnce,
    start() {
      if (loop) return;
      stopping = false;
      loop = run();
    },
    async stop() {
      stopping = true;
      wake?.();
      await loop;
      loop = undefined;
    },
  };
}
