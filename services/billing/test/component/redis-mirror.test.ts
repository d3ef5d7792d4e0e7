// The Redis copy every service reads (a change holds everywhere within 1 s): written before the operator call answers,
// never older than what Redis holds, and rebuilt from PostgreSQL when Redis was away, restarted
// empty, or restarted with old data.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { subscriptionKey } from '@herald/policy';
import {
  eventually,
  mirrored,
  ownRedis,
  startBillingService,
  type OwnRedis,
  type TestBillingService,
} from '../support.js';

describe('the Redis mirror, on the stack Redis', () => {
  let svc: TestBillingService;
  beforeAll(async () => {
    svc = await startBillingService({ syncIntervalMs: 200 });
  });
  afterAll(() => svc.close());

  it('when a change answers, then Redis already holds it, with its version', async () => {
    const tenantId = svc.newTenant();
    await svc.fail(tenantId);
    expect(await mirrored(svc.redis, tenantId)).toStrictEqual({
      state: 'active',
      consecutiveFailures: 1,
      version: 1,
    });
    await svc.fail(tenantId);
    await svc.fail(tenantId);
    expect(await mirrored(svc.redis, tenantId)).toStrictEqual({
      state: 'suspended',
      consecutiveFailures: 3,
      version: 3,
    });
    await svc.updateDetails(tenantId);
    expect(await mirrored(svc.redis, tenantId)).toStrictEqual({
      state: 'active',
      consecutiveFailures: 0,
      version: 4,
    });
    // No expiry: a billing outage must not lift suspensions as mirrors expire.
    expect(await svc.redis.pTTL(subscriptionKey(tenantId))).toBe(-1);
  });

  it('when an older snapshot is stored after a newer one, then Redis keeps the newer', async () => {
    const tenantId = svc.newTenant();
    await svc.fail(tenantId);
    await svc.fail(tenantId);
    const older = {
      tenantId,
      state: 'active' as const,
      consecutiveFailures: 1,
      version: 1,
      updatedAt: null,
    };
    expect(await svc.mirror.store(older)).toBe(true);
    expect(await mirrored(svc.redis, tenantId)).toMatchObject({
      version: 2,
      consecutiveFailures: 2,
    });
  });

  it('when a change is committed, then the sync loop marks it as held by Redis', async () => {
    const tenantId = svc.newTenant();
    await svc.fail(tenantId);
    await eventually(async () => (await svc.stored(tenantId))?.redisSyncedVersion === 1, 5_000);
  });

  it('when the key vanished after the loop synced it, then the loop does not rewrite it (the internal route does)', async () => {
    const tenantId = svc.newTenant();
    await svc.fail(tenantId);
    await eventually(async () => (await svc.stored(tenantId))?.redisSyncedVersion === 1, 5_000);
    await svc.redis.del(subscriptionKey(tenantId));
    await new Promise((r) => setTimeout(r, 600));
    expect(await mirrored(svc.redis, tenantId)).toBeNull();
  });
});

describe('the Redis mirror, on a Redis that stops and starts', () => {
  let redis: OwnRedis;
  let svc: TestBillingService;
  beforeAll(async () => {
    redis = await ownRedis();
    svc = await startBillingService({ redisUrl: redis.url, syncIntervalMs: 200 });
  });
  afterAll(async () => {
    await svc.close();
    await redis.close();
  });
  afterEach(async () => {
    await redis.start().catch(() => {});
  });

  const synced = (tenantId: string, version: number) => async () => {
    const row = await svc.stored(tenantId);
    return row?.version === version && row.redisSyncedVersion === version;
  };

  it('when Redis is down, then changes still answer 200 at once and land in Redis once it is back', async () => {
    const tenantId = svc.newTenant();
    await svc.fail(tenantId);
    await eventually(async () => (await mirrored(redis.client, tenantId))?.version === 1);

    await redis.kill();
    const started = Date.now();
    expect(await svc.fail(tenantId)).toStrictEqual({ state: 'active', consecutiveFailures: 2 });
    expect(await svc.fail(tenantId)).toStrictEqual({ state: 'suspended', consecutiveFailures: 3 });
    expect(Date.now() - started).toBeLessThan(1_500);
    const res = await svc.admin('GET', `${tenantId}/billing`);
    expect(await res.json()).toStrictEqual({ state: 'suspended', consecutiveFailures: 3 });
    // Down for a few passes of the loop: it keeps trying and keeps the row marked as behind.
    await new Promise((r) => setTimeout(r, 700));
    expect(await svc.stored(tenantId)).toMatchObject({ version: 3 });
    expect((await svc.stored(tenantId))!.redisSyncedVersion).toBeLessThan(3);

    // Back empty (nothing was saved): the loop writes the latest state.
    await redis.start();
    const ms = await eventually(synced(tenantId, 3), 10_000, 'sync after Redis came back');
    expect(await mirrored(redis.client, tenantId)).toStrictEqual({
      state: 'suspended',
      consecutiveFailures: 3,
      version: 3,
    });
    expect(ms).toBeLessThan(5_000);
  });

  it('when Redis restarts with older data than it had, then every row is written again', async () => {
    const tenantId = svc.newTenant();
    const other = svc.newTenant();
    await svc.fail(tenantId);
    await svc.fail(other);
    await eventually(synced(tenantId, 1));
    await eventually(synced(other, 1));
    // The snapshot a restarted Redis will come back with: both Tenants at version 1.
    await redis.save();

    await svc.fail(tenantId);
    await svc.fail(tenantId);
    await eventually(synced(tenantId, 3));
    expect(await mirrored(redis.client, tenantId)).toMatchObject({ version: 3 });

    // Killed: what was written after the snapshot is lost, and the row says "synced".
    await redis.kill();
    await redis.start();
    await eventually(async () => (await mirrored(redis.client, tenantId))?.version === 3, 10_000);
    expect(await mirrored(redis.client, tenantId)).toStrictEqual({
      state: 'suspended',
      consecutiveFailures: 3,
      version: 3,
    });
    expect(await mirrored(redis.client, other)).toMatchObject({ version: 1 });
    await eventually(synced(tenantId, 3));
  });
});
