// GET /internal/v1/tenants/{tenantId}/subscription: what the other services ask when their Redis
// copy is missing (flushed, expired, Redis restarted) or Redis is down.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { subscriptionKey } from '@herald/policy';
import {
  ADMIN_TOKEN,
  mirrored,
  ownRedis,
  SERVICE_TOKEN,
  startBillingService,
  type OwnRedis,
  type TestBillingService,
} from '../support.js';

const subscription = (svc: TestBillingService, tenantId: string, token = SERVICE_TOKEN) =>
  svc.request('GET', `/internal/v1/tenants/${tenantId}/subscription`, { token });

describe('the internal subscription route', () => {
  let svc: TestBillingService;
  beforeAll(async () => {
    svc = await startBillingService();
  });
  afterAll(() => svc.close());

  it('when a Tenant never had a billing event, then active, no failures, version 0', async () => {
    const tenantId = randomUUID();
    const res = await subscription(svc, tenantId);
    expect(res.status).toBe(200);
    expect(await res.json()).toStrictEqual({
      state: 'active',
      consecutiveFailures: 0,
      version: 0,
    });
    expect(await mirrored(svc.redis, tenantId)).toStrictEqual({
      state: 'active',
      consecutiveFailures: 0,
      version: 0,
    });
  });

  it('when the Redis key was flushed, then the route answers from PostgreSQL and restores it', async () => {
    const tenantId = svc.newTenant();
    for (let i = 0; i < 3; i += 1) await svc.fail(tenantId);
    await svc.redis.del(subscriptionKey(tenantId));
    expect(await mirrored(svc.redis, tenantId)).toBeNull();

    const res = await subscription(svc, tenantId);
    expect(await res.json()).toStrictEqual({
      state: 'suspended',
      consecutiveFailures: 3,
      version: 3,
    });
    expect(await mirrored(svc.redis, tenantId)).toStrictEqual({
      state: 'suspended',
      consecutiveFailures: 3,
      version: 3,
    });
  });

  it('when Redis holds a newer snapshot than the route read, then it stays', async () => {
    const tenantId = svc.newTenant();
    await svc.fail(tenantId);
    // As if a change committed after this route's read: Redis is ahead, the refill is older.
    await svc.mirror.store({
      tenantId,
      state: 'suspended',
      consecutiveFailures: 9,
      version: 9,
      updatedAt: null,
    });
    await subscription(svc, tenantId);
    expect(await mirrored(svc.redis, tenantId)).toMatchObject({ version: 9 });
  });

  it('when the token is missing, the admin token or wrong, then 401', async () => {
    for (const token of ['', ADMIN_TOKEN, 'wrong-token']) {
      const res = await subscription(svc, randomUUID(), token);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 'unauthenticated' });
    }
  });

  it('when the Tenant id is malformed, then 404; another method, then 405', async () => {
    expect((await subscription(svc, 'nope')).status).toBe(404);
    const res = await svc.request('POST', `/internal/v1/tenants/${randomUUID()}/subscription`, {
      token: SERVICE_TOKEN,
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
  });
});

describe('the internal subscription route with Redis down', () => {
  let redis: OwnRedis;
  let svc: TestBillingService;
  beforeAll(async () => {
    redis = await ownRedis();
    svc = await startBillingService({ redisUrl: redis.url });
  });
  afterAll(async () => {
    await svc.close();
    await redis.close();
  });

  it('when Redis is down, then the route still answers from PostgreSQL, at once', async () => {
    const tenantId = svc.newTenant();
    await svc.fail(tenantId);
    await redis.kill();
    const started = Date.now();
    const res = await subscription(svc, tenantId);
    expect(res.status).toBe(200);
    expect(await res.json()).toStrictEqual({
      state: 'active',
      consecutiveFailures: 1,
      version: 1,
    });
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
