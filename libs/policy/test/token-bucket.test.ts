// The rate-limit script against real Redis: the single node and the local stack's
// three-master Redis Cluster (the shape production runs).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createRedis, waitForRedis, type Redis } from '@herald/redis';
import { budgetKey, chargeTokens, peekTokens, takeTokens } from '../src/index.js';

const single = process.env.REDIS_URL ?? 'redis://127.0.0.1:56379';
const clusterNodes = (
  process.env.HERALD_REDIS_CLUSTER_NODES ??
  'redis://127.0.0.1:56380,redis://127.0.0.1:56381,redis://127.0.0.1:56382'
).split(',');

const targets: [string, () => Redis][] = [
  ['a single node', () => createRedis({ url: single })],
  ['a three-master Redis Cluster', () => createRedis({ clusterNodes })],
];

describe.each(targets)('takeTokens on %s', (_name, connect) => {
  let redis: Redis;
  beforeAll(async () => {
    redis = connect();
    await waitForRedis(redis, 15_000);
  });
  afterAll(() => redis.close());

  const freshKey = () => budgetKey(`ck_test${randomUUID().slice(0, 8)}`, 'write');

  it('when the burst is used up, then the next call is refused with an honest retry time', async () => {
    const key = freshKey();
    const limits = { refillPerSecond: 2, burst: 3 };
    const results = [];
    for (let i = 0; i < 4; i += 1) results.push(await takeTokens(redis, key, limits));

    expect(results.map((r) => r.allowed)).toEqual([true, true, true, false]);
    expect(results.map((r) => r.remaining)).toEqual([2, 1, 0, 0]);
    const refused = results[3]!;
    // One token at 2/s is at most 500 ms away; the bucket is full again within 1.5 s.
    expect(refused.retryInMs).toBeGreaterThan(0);
    expect(refused.retryInMs).toBeLessThanOrEqual(500);
    expect(refused.fullInMs).toBeLessThanOrEqual(1_500);

    await new Promise((r) => setTimeout(r, refused.retryInMs + 20));
    expect((await takeTokens(redis, key, limits)).allowed).toBe(true);
  });

  it('when many callers race for one bucket, then exactly the burst plus the refill pass', async () => {
    const key = freshKey();
    const limits = { refillPerSecond: 1, burst: 50 };
    const started = performance.now();
    const results = await Promise.all(
      Array.from({ length: 400 }, () => takeTokens(redis, key, limits)),
    );
    const elapsedS = (performance.now() - started) / 1000;
    const allowed = results.filter((r) => r.allowed).length;

    expect(allowed).toBeGreaterThanOrEqual(50);
    expect(allowed).toBeLessThanOrEqual(50 + Math.floor(elapsedS * 1) + 1);
  });

  it('when a bucket is peeked at, then nothing is taken; when charged, then it goes into debt (at most one burst) that the refill pays back first', async () => {
    const key = freshKey();
    const limits = { refillPerSecond: 1, burst: 2 };
    for (let i = 0; i < 5; i += 1)
      expect((await peekTokens(redis, key, limits)).allowed).toBe(true);
    expect(await takeTokens(redis, key, limits)).toMatchObject({ allowed: true, remaining: 1 });

    await chargeTokens(redis, key, limits, 10);
    const peeked = await peekTokens(redis, key, limits);
    // Debt capped at -2: three tokens short of one, at 1/s.
    expect(peeked).toMatchObject({ allowed: false, remaining: 0 });
    expect(peeked.retryInMs).toBeGreaterThan(2_800);
    expect(peeked.retryInMs).toBeLessThanOrEqual(3_000);
  });

  it('when the bucket is stored, then its time and tokens are exact decimals, not rounded floats', async () => {
    const key = freshKey();
    await takeTokens(redis, key, { refillPerSecond: 3, burst: 7 });
    const [tokens, at] = await redis.hmGet(key, ['tokens', 'at']);
    expect(at).toMatch(/^\d{16}$/);
    expect(tokens).toBe('6');
  });

  it('when buckets of different keys are used, then they do not share tokens and expire once full', async () => {
    const limits = { refillPerSecond: 1_000, burst: 1 };
    const a = freshKey();
    const b = freshKey();
    expect((await takeTokens(redis, a, limits)).allowed).toBe(true);
    expect((await takeTokens(redis, b, limits)).allowed).toBe(true);
    // Full again after 1 ms; the key is kept only a second longer than that.
    const ttl = await redis.pTTL(a);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1_002);
  });
});
