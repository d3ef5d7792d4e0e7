import { isIPv6 } from 'node:net';
import { errors } from '@herald/errors';
import { chargeTokens, peekTokens, type BucketLimits } from '@herald/policy';
import { createRedisGuard, taggedKey, type Redis } from '@herald/redis';
import { meter } from '@herald/telemetry';

// Before an exchange that could run the slow hash, the guard checks that the
// client address and (for a secret key's ClientID) the ClientID still have failures allowed;
// a failed hash is then charged to both. A bucket may go into debt (up to one burst) when many
// failures land at once, so a burst of concurrent attempts locks the attacker out for longer
// rather than getting through again sooner. Successful exchanges are never counted, so any
// number of them may run at once.

export interface ExchangeGuardLimits {
  /** Failed exchanges per ClientID: a burst, then `refillPerSecond` more. */
  client: BucketLimits;
  /** Failed exchanges per client address. */
  address: BucketLimits;
}

/**
 * Production values (the settings default to them): per ClientID 10 failures, then one every
 * 6 s; per address 30, then one every 2 s.
 */
export const DEFAULT_EXCHANGE_GUARD_LIMITS: ExchangeGuardLimits = {
  client: { burst: 10, refillPerSecond: 10 / 60 },
  address: { burst: 30, refillPerSecond: 30 / 60 },
};

/** What an admitted exchange reports back. */
export interface Admission {
  /** The exchange ran the hash and failed: one failure for the address and the ClientID. */
  failed(): Promise<void>;
}

export interface ExchangeGuard {
  /** Admits the attempt or throws 429 rate_limited with an honest Retry-After. */
  admit(clientId: string | null, address: string): Promise<Admission>;
}

interface WarnLogger {
  warn(obj: object, msg: string): void;
}

/**
 * Only a secret key's ClientID has a bucket: a publishable ClientID is public and its exchange
 * never hashes, so a bucket would only let anyone lock a customer's browsers out.
 */
const SECRET_CLIENT_ID = /^ck_[0-9A-Za-z]{1,64}$/;

/**
 * An IPv6 client is counted by its /64 (one subscriber's usual allocation); an IPv4 one (also
 * when written v4-mapped) by its address.
 */
export function addressBucket(address: string): string {
  const v4 = /^(?:::ffff:)?(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (v4) return v4[1]!;
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

export function createExchangeGuard(deps: {
  redis: Redis;
  limits: ExchangeGuardLimits;
  logger: WarnLogger;
  /** First part of the Redis keys; tests give each instance its own. Default `herald`. */
  keyPrefix?: string;
}): ExchangeGuard {
  const { redis, limits, keyPrefix = 'herald' } = deps;
  const guard = createRedisGuard({
    use: 'exchange_guard',
    operations: ['admit', 'charge'],
    logger: deps.logger,
    fallback: 'failed token exchanges are not limited (fail open)',
    timeoutMs: 500,
  });
  const refused = meter('herald.auth').createCounter('auth.exchange_guard.refused', {
    unit: '{request}',
    description:
      'Token exchanges refused with 429 before hashing (attribute limit: client or address)',
  });
  // Both series from the start, at 0, for rates that read 0 before the first refusal.
  for (const limit of ['client', 'address']) refused.add(0, { limit });

  return {
    async admit(clientId, address) {
      const buckets: { limit: 'client' | 'address'; key: string; limits: BucketLimits }[] = [
        {
          limit: 'address',
          key: taggedKey(keyPrefix, `addr:${addressBucket(address)}`, 'exchange-failures'),
          limits: limits.address,
        },
      ];
      // A string that is no secret key's ClientID gets no bucket of its own: no Redis key per
      // random name (the address bucket still counts its failures).
      if (clientId !== null && SECRET_CLIENT_ID.test(clientId)) {
        buckets.push({
          limit: 'client',
          key: taggedKey(keyPrefix, clientId, 'exchange-failures'),
          limits: limits.client,
        });
      }
      let results;
      try {
        // Two slots on a Cluster (address, ClientID): asked in parallel.
        results = await guard.run('admit', () =>
          Promise.all(buckets.map((b) => peekTokens(redis, b.key, b.limits))),
        );
      } catch {
        return { failed: () => Promise.resolve() };
      }
      const denied = buckets.filter((_, i) => !results[i]!.allowed);
      if (denied.length > 0) {
        for (const b of denied) refused.add(1, { limit: b.limit });
        const waitMs = Math.max(...results.filter((r) => !r.allowed).map((r) => r.retryInMs));
        throw errors.rateLimited(
          waitMs / 1000,
          'too many failed token exchanges; retry after the number of seconds in Retry-After',
        );
      }
      return {
        failed: async () => {
          await guard
            .run('charge', () =>
              Promise.all(buckets.map((b) => chargeTokens(redis, b.key, b.limits))),
            )
            .catch(() => {});
        },
      };
    },
  };
}
