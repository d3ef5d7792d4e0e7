import { meter } from '@herald/telemetry';

/** The logger calls a guard makes (pino's shape). */
interface WarnLogger {
  warn(obj: object, msg: string): void;
}

export interface RedisGuardOptions {
  /** What the calls are for, e.g. `dedup` or `rate_limit`: the metric's `use` attribute. */
  use: string;
  logger: WarnLogger;
  /** What the caller does instead while Redis fails, for the log line. */
  fallback: string;
  /**
   * The operations the caller runs (the metric's `operation` attribute): their failure series
   * exist from the start at 0, so a rate over them reads 0 rather than nothing.
   */
  operations: readonly string[];
  /** A call slower than this is given up on. Default 100 ms. */
  timeoutMs?: number;
  /**
   * After a failure Redis is left alone this long, so a Redis that hangs costs one timeout
   * per period rather than one per request. Default 5 s.
   */
  cooldownMs?: number;
  /** At most one log line per this many ms. Default one minute. */
  logIntervalMs?: number;
  /**
   * Consecutive failures before the cooldown starts. Default 1; a caller that must not lose
   * Redis for a whole cooldown over one slow answer (a busy event loop) asks for more.
   */
  failuresBeforeRest?: number;
}

/**
 * Bounds the Redis calls of one use: each call has a deadline, and after a failure the guard
 * refuses calls at once for a cooldown. Callers treat a rejection as "Redis is away" and fall
 * back; the failure is counted (`redis.failures{use,operation}`) and logged, rarely.
 */
export interface RedisGuard {
  /** Runs `call` within the deadline; rejects at once while cooling down. */
  run<T>(operation: string, call: () => Promise<T>): Promise<T>;
  /** Whether the guard is cooling down after a failure. */
  resting(): boolean;
}

const failures = () =>
  meter('herald.redis').createCounter('redis.failures', {
    unit: '{error}',
    description: 'Redis calls that failed, timed out or were skipped while Redis was failing',
  });

export function createRedisGuard(options: RedisGuardOptions): RedisGuard {
  const { use, logger, fallback, timeoutMs = 100, cooldownMs = 5_000 } = options;
  const logIntervalMs = options.logIntervalMs ?? 60_000;
  const failuresBeforeRest = options.failuresBeforeRest ?? 1;
  const counter = failures();
  for (const operation of options.operations) counter.add(0, { use, operation });
  let restingUntil = -Infinity;
  let lastLoggedAt = -Infinity;
  let consecutive = 0;

  function failed(operation: string, err: unknown): void {
    counter.add(1, { use, operation });
    const now = performance.now();
    consecutive += 1;
    if (consecutive >= failuresBeforeRest) {
      restingUntil = now + cooldownMs;
      consecutive = 0;
    }
    if (now - lastLoggedAt < logIntervalMs) return;
    lastLoggedAt = now;
    logger.warn(
      { err, use, operation },
      `Redis failed (${use}): ${fallback} (logged at most once per ${logIntervalMs / 1000} s)`,
    );
  }

  return {
    resting: () => performance.now() < restingUntil,
    async run(operation, call) {
      if (performance.now() < restingUntil) {
        counter.add(1, { use, operation });
        throw new Error(`Redis (${use}) is cooling down after a failure`);
      }
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`Redis did not answer in ${timeoutMs} ms`)),
          timeoutMs,
        );
      });
      try {
        const result = await Promise.race([call(), timeout]);
        consecutive = 0;
        return result;
      } catch (err) {
        failed(operation, err);
        throw err;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
