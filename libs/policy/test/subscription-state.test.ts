import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createRedis, waitForRedis, type Redis } from '@herald/redis';
import {
  decodeSnapshot,
  encodeSnapshot,
  storeSubscriptionState,
  subscriptionKey,
} from '../src/index.js';

let redis: Redis;
beforeAll(async () => {
  redis = createRedis({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:56379' });
  await waitForRedis(redis);
});
afterAll(() => redis.close());

describe('subscription snapshot encoding', () => {
  it('when a snapshot is encoded, then decoding gives it back', () => {
    const s = { state: 'suspended', consecutiveFailures: 3, version: 7 } as const;
    expect(encodeSnapshot(s)).toBe('suspended:7:3');
    expect(decodeSnapshot(encodeSnapshot(s))).toEqual(s);
  });

  it('when the value is missing or foreign, then it decodes to null (ask billing)', () => {
    expect(decodeSnapshot(null)).toBeNull();
    expect(decodeSnapshot(undefined)).toBeNull();
    expect(decodeSnapshot('paused:1:0')).toBeNull();
    expect(decodeSnapshot('active:x:0')).toBeNull();
  });
});

describe('storeSubscriptionState', () => {
  it('when versions arrive out of order, then Redis keeps the newest, with no expiry', async () => {
    const tenantId = randomUUID();
    const key = subscriptionKey(tenantId);
    expect(key).toBe(`herald:{${tenantId}}:subscription`);

    expect(
      await storeSubscriptionState(redis, tenantId, {
        state: 'suspended',
        consecutiveFailures: 3,
        version: 3,
      }),
    ).toBe(true);
    expect(
      await storeSubscriptionState(redis, tenantId, {
        state: 'active',
        consecutiveFailures: 2,
        version: 2,
      }),
    ).toBe(false);
    expect(await redis.get(key)).toBe('suspended:3:3');

    expect(await redis.pTTL(key)).toBe(-1);

    expect(
      await storeSubscriptionState(redis, tenantId, {
        state: 'active',
        consecutiveFailures: 0,
        version: 4,
      }),
    ).toBe(true);
    expect(decodeSnapshot(await redis.get(key))).toEqual({
      state: 'active',
      consecutiveFailures: 0,
      version: 4,
    });
    await redis.del(key);
  });

  it('when the script cache was flushed, then the script is loaded again', async () => {
    const tenantId = randomUUID();
    await redis.scriptFlush();
    expect(
      await storeSubscriptionState(redis, tenantId, {
        state: 'active',
        consecutiveFailures: 1,
        version: 1,
      }),
    ).toBe(true);
    await redis.del(subscriptionKey(tenantId));
  });
});
