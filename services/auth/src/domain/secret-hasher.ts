import { errors } from '@herald/errors';
import { meter } from '@herald/telemetry';
import argon2 from 'argon2';

/**
 * OWASP Password Storage Cheat Sheet, argon2id minimum: 19 MiB of memory, 2 iterations,
 * 1 degree of parallelism. The parameters are kept in each hash, so raising them later
 * leaves old hashes verifiable.
 */
export const ARGON2_OPTIONS = {
  type: argon2.argon2id,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const;

export interface SecretHasher {
  hash(secret: string): Promise<string>;
  verify(hash: string, secret: string): Promise<boolean>;
}

export const argon2Hasher: SecretHasher = {
  hash: (secret) => argon2.hash(secret, ARGON2_OPTIONS),
  verify: async (hash, secret) => {
    try {
      return await argon2.verify(hash, secret);
    } catch {
      return false;
    }
  },
};

/**
 * At most `concurrency` hashes at once in this process, at most `queue` more waiting; beyond
 * that, 503 with Retry-After. Each argon2id run holds 19 MiB and a core: without a bound, a
 * burst of exchanges (many addresses, many keys, past the exchange guard) would take the
 * replica's memory, and its latency would grow without limit instead of shedding load.
 */
export function boundedHasher(
  hasher: SecretHasher,
  { concurrency, queue }: { concurrency: number; queue: number },
): SecretHasher {
  let running = 0;
  const waiting: (() => void)[] = [];
  // Observed when metrics are collected: the queue an operator scales on.
  const m = meter('herald.auth');
  m.createObservableUpDownCounter('auth.hash.queue.depth', {
    unit: '{request}',
    description: 'Token exchanges waiting for an argon2 hash (beyond HASH_QUEUE: 503)',
  }).addCallback((result) => result.observe(waiting.length));
  m.createObservableUpDownCounter('auth.hash.active', {
    unit: '{request}',
    description: 'argon2 hashes running (at most HASH_CONCURRENCY)',
  }).addCallback((result) => result.observe(running));

  async function slot<T>(work: () => Promise<T>): Promise<T> {
    if (running >= concurrency) {
      if (waiting.length >= queue) {
        throw errors.unavailable('too many token exchanges at once; retry shortly');
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
    } else {
      running += 1;
    }
    try {
      return await work();
    } finally {
      // Hand the slot straight to the next waiter, or free it.
      const next = waiting.shift();
      if (next) next();
      else running -= 1;
    }
  }

  return {
    hash: (secret) => slot(() => hasher.hash(secret)),
    verify: (hash, secret) => slot(() => hasher.verify(hash, secret)),
  };
}
