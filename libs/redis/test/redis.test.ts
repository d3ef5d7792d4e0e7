import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createRedis, taggedKey, waitForRedis, type Redis } from '../src/index.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:56379';
let redis: Redis;

beforeAll(async () => {
  redis = createRedis({ url });
  await waitForRedis(redis);
});
afterAll(async () => {
  await redis.close();
});

describe('taggedKey', () => {
  it('when keys share a tag, then their hash tag is that tag alone', () => {
    expect(taggedKey('ratelimit', 'ck_123', 'read')).toBe('ratelimit:{ck_123}:read');
  });
});

describe('createRedis', () => {
  it('when connected to the local server, then commands and scripts run against it', async () => {
    const key = taggedKey('test', `${process.pid}-${Date.now()}`, 'counter');
    await redis.set(key, '41', { expiration: { type: 'PX', value: 5_000 } });
    const result = await redis.eval("return redis.call('INCR', KEYS[1])", {
      keys: [key],
      arguments: [],
    });
    expect(result).toBe(42);
    await redis.del(key);
  });

  it('when nothing listens at the address, then commands fail at once instead of queueing', async () => {
    const down = createRedis({ url: 'redis://127.0.0.1:9' });
    try {
      const started = Date.now();
      await expect(down.get('anything')).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(1_000);
      await expect(waitForRedis(down, 300)).rejects.toThrow(/did not answer/);
    } finally {
      down.destroy();
    }
  });
});
