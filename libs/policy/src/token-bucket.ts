import { defineScript, type Redis } from '@herald/redis';

/** A bucket that holds up to `burst` tokens and gains `refillPerSecond` every second. */
export interface BucketLimits {
  refillPerSecond: number;
  burst: number;
}

export interface BucketResult {
  allowed: boolean;
  /** Whole tokens left after this call. */
  remaining: number;
  /** Until the bucket is full again, in ms. */
  fullInMs: number;
  /** Until a call of the same cost would pass, in ms (0 when allowed). */
  retryInMs: number;
}

// One atomic call per request. The clock is Redis's own (TIME), never the caller's, so
// replicas with skewed clocks share one timeline. If TIME ever goes backwards (failover to a
// replica with a slower clock), nothing refills until it catches up: never a free burst.
// A negative cost gives tokens back (capped at the burst).
const TAKE = defineScript(`
local refill = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
end
if now > at then
  tokens = math.min(burst, tokens + (now - at) * refill / 1000000)
  at = now
end
local allowed = 0
local retry_us = 0
if tokens >= cost then
  tokens = math.min(burst, tokens - cost)
  allowed = 1
else
  retry_us = (cost - tokens) * 1000000 / refill
end
local full_us = (burst - tokens) * 1000000 / refill
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(at))
redis.call('PEXPIRE', KEYS[1], math.ceil(full_us / 1000) + 1000)
return { allowed, math.floor(tokens), math.ceil(full_us / 1000), math.ceil(retry_us / 1000) }
`);

/**
 * Takes `cost` tokens from the bucket at `key` if it holds that many. Atomic, so exact under
 * any number of concurrent callers and replicas. Rejects when Redis fails.
 */
export async function takeTokens(
  redis: Redis,
  key: string,
  limits: BucketLimits,
  cost = 1,
): Promise<BucketResult> {
  const reply = await TAKE.run(redis, [key], [limits.refillPerSecond, limits.burst, cost]);
  // Anything but the script's four integers is a broken Redis, not a verdict on the caller.
  if (!isFourIntegers(reply)) {
    throw new Error(`rate-limit script: unexpected reply ${JSON.stringify(reply)}`);
  }
  const [allowed, remaining, fullInMs, retryInMs] = reply;
  return { allowed: allowed === 1, remaining, fullInMs, retryInMs };
}

function isFourIntegers(reply: unknown): reply is [number, number, number, number] {
  return Array.isArray(reply) && reply.length === 4 && reply.every((n) => Number.isInteger(n));
}

/** Gives back tokens taken for an attempt that turned out not to count (capped at burst). */
export async function returnTokens(
  redis: Redis,
  key: string,
  limits: BucketLimits,
  count = 1,
): Promise<void> {
  await TAKE.run(redis, [key], [limits.refillPerSecond, limits.burst, -count]);
}
