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
// Modes: `take` takes `cost` tokens if there are that many; `peek` only tells whether there
// are; `charge` takes them in any case, going into debt down to -burst (a debt is paid back by
// the refill before anything passes again). State is stored as exact decimal strings.
const BUCKET = defineScript(`
local refill = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local mode = ARGV[4]
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
if tokens >= cost then allowed = 1 end
if mode == 'take' and allowed == 1 then
  tokens = tokens - cost
elseif mode == 'charge' then
  tokens = math.max(-burst, tokens - cost)
end
local retry_us = 0
if allowed == 0 then retry_us = (cost - tokens) * 1000000 / refill end
local full_us = (burst - tokens) * 1000000 / refill
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'at', string.format('%d', at))
redis.call('PEXPIRE', KEYS[1], math.ceil(full_us / 1000) + 1000)
return { allowed, math.floor(math.max(tokens, 0)), math.ceil(full_us / 1000), math.ceil(retry_us / 1000) }
`);

type Mode = 'take' | 'peek' | 'charge';

async function runBucket(
  redis: Redis,
  key: string,
  limits: BucketLimits,
  cost: number,
  mode: Mode,
): Promise<BucketResult> {
  const reply = await BUCKET.run(redis, [key], [limits.refillPerSecond, limits.burst, cost, mode]);
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

/**
 * Takes `cost` tokens from the bucket at `key` if it holds that many. Atomic, so exact under
 * any number of concurrent callers and replicas. Rejects when Redis fails.
 */
export function takeTokens(
  redis: Redis,
  key: string,
  limits: BucketLimits,
  cost = 1,
): Promise<BucketResult> {
  return runBucket(redis, key, limits, cost, 'take');
}

/** Whether `cost` tokens are there, taking none. */
export function peekTokens(
  redis: Redis,
  key: string,
  limits: BucketLimits,
  cost = 1,
): Promise<BucketResult> {
  return runBucket(redis, key, limits, cost, 'peek');
}

/**
 * Takes `cost` tokens whether or not they are there: the bucket may go into debt (down to
 * -burst), which the refill pays back before anything passes again.
 */
export async function chargeTokens(
  redis: Redis,
  key: string,
  limits: BucketLimits,
  cost = 1,
): Promise<void> {
  await runBucket(redis, key, limits, cost, 'charge');
}
