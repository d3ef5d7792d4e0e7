import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connectRedis, taggedKey, type Redis } from '../src/index.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:56379';
let redis: Redis;

beforeAll(async () => {
  redis = await connectRedis({ url });
});
afterAll(async () => {
  await redis.close();
});

describe('taggedKey', () => {
  it('when keys share a tag, then their hash tag is that tag alone', () => {
    expect(taggedKey('ratelimit', 'ck_123', 'read')).toBe('ratelimit:{ck_123}:read');
  });
});

describe('connectRedis', () => {
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

  it('when nothing listens at the address, then connecting fails instead of hanging', async () => {
    await expect(
      connectRedis({ url: 'redis://127.0.0.1:9' }).then((c) => c.close()),
    ).rejects.toThrow();
  }, 10_000);
});
