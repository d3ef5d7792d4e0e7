// POST /internal/v1/tenants/{tenantId}/delete: the billing part of a Tenant's deletion, which the
// auth service calls until it answers done.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseServiceCallers } from '@herald/auth';
import { createPool, type Pool } from '@herald/db';
import { startServer, type RunningServer } from '@herald/http';
import { TOPICS } from '@herald/messages';
import { subscriptionKey } from '@herald/policy';
import { createRedis, waitForRedis, type Redis } from '@herald/redis';
import { createTestRequester, TEST_REDIS_URL } from '@herald/testing';
import { createApp } from '../../src/app.js';
import { createSubscriptionMirror } from '../../src/domain/redis-mirror.js';
import {
  ADMIN_TOKEN,
  mirrored,
  ownRedis,
  prepareBillingDatabase,
  SERVICE_TOKEN,
  silentLogger,
  type OwnRedis,
} from '../support.js';

/** The auth service's own token: the one caller of the route. */
const AUTH_TOKEN = `test-auth-${randomUUID()}`;

interface Billing {
  pool: Pool;
  tenants: Set<string>;
  request: ReturnType<typeof createTestRequester>;
  close(): Promise<void>;
}

/** The billing service with the auth service among its callers, its mirror on `redis`. */
async function startBilling(redisUrl: string): Promise<Billing> {
  const pool = createPool({
    connectionString: await prepareBillingDatabase(),
    applicationName: 'billing-tenant-deletion-test',
    max: 5,
  });
  const redis = createRedis({ url: redisUrl });
  const logger = silentLogger();
  const tenants = new Set<string>();
  const app = createApp({
    pool,
    logger,
    mirror: createSubscriptionMirror({ pool, redis, logger }),
    tenantExists: (tenantId) => Promise.resolve(tenants.has(tenantId)),
    adminToken: ADMIN_TOKEN,
    serviceCallers: parseServiceCallers(`contacts:${SERVICE_TOKEN},auth:${AUTH_TOKEN}`),
    suspendAfterFailures: 3,
  });
  const running: RunningServer = await startServer(app, { host: '127.0.0.1', port: 0, logger });
  return {
    pool,
    tenants,
    request: createTestRequester(running.url),
    async close() {
      await running.close();
      await pool.end();
      redis.destroy();
    },
  };
}

let billing: Billing;
let redis: Redis;
beforeAll(async () => {
  redis = createRedis({ url: TEST_REDIS_URL });
  await waitForRedis(redis);
  billing = await startBilling(TEST_REDIS_URL);
});
afterAll(async () => {
  await billing.close();
  redis.destroy();
});

const deleteTenant = (service: Billing, tenantId: string, token = AUTH_TOKEN) =>
  service.request('POST', `/internal/v1/tenants/${tenantId}/delete`, { token });

/** A Tenant with two failed payments: a subscription row, its messages, its Redis copy. */
async function billedTenant(service: Billing): Promise<string> {
  const tenantId = randomUUID();
  service.tenants.add(tenantId);
  for (let i = 0; i < 2; i += 1) {
    const res = await service.request(
      'POST',
      `/admin/v1/tenants/${tenantId}/billing/payment-failures`,
      { token: ADMIN_TOKEN },
    );
    expect(res.status).toBe(200);
  }
  return tenantId;
}

async function heldOf(pool: Pool, tenantId: string) {
  const count = async (sql: string) =>
    Number((await pool.query<{ n: string }>(sql, [tenantId])).rows[0]!.n);
  return {
    subscriptions: await count('select count(*) as n from subscriptions where tenant_id = $1'),
    outbox: await count(
      `select count(*) as n from outbox where value is not null and value::json ->> 'tenantId' = $1`,
    ),
  };
}

describe("the billing part of a Tenant's deletion", () => {
  it('when a Tenant is deleted, then its subscription, unsent messages and Redis copy are gone, a tombstone goes to the compacted topic, and another Tenant keeps its own', async () => {
    const deleted = await billedTenant(billing);
    const kept = await billedTenant(billing);
    expect(await heldOf(billing.pool, deleted)).toEqual({ subscriptions: 1, outbox: 2 });
    expect(await mirrored(redis, deleted)).toMatchObject({ consecutiveFailures: 2 });

    const res = await deleteTenant(billing, deleted);

    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ done: true, deletedRows: 3 });
    expect(await heldOf(billing.pool, deleted)).toEqual({ subscriptions: 0, outbox: 0 });
    expect(await redis.exists(subscriptionKey(deleted))).toBe(0);
    const { rows } = await billing.pool.query<{ topic: string; value: string | null }>(
      'select topic, value from outbox where key = $1',
      [deleted],
    );
    expect(rows).toEqual([{ topic: TOPICS.subscriptionsChanged, value: null }]);
    expect(await heldOf(billing.pool, kept)).toEqual({ subscriptions: 1, outbox: 2 });
    expect(await mirrored(redis, kept)).toMatchObject({ consecutiveFailures: 2 });
  });

  it('when the deletion is called again, or for a Tenant never billed, then 200 done with nothing deleted', async () => {
    const tenantId = await billedTenant(billing);
    expect((await deleteTenant(billing, tenantId)).status).toBe(200);

    for (const id of [tenantId, randomUUID()]) {
      const res = await deleteTenant(billing, id);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ done: true, deletedRows: 0 });
    }
  });

  it('when a caller other than auth calls, then 403; nothing is deleted', async () => {
    const tenantId = await billedTenant(billing);

    expect((await deleteTenant(billing, tenantId, SERVICE_TOKEN)).status).toBe(403);
    expect(await heldOf(billing.pool, tenantId)).toEqual({ subscriptions: 1, outbox: 2 });
  });

  describe('with Redis down', () => {
    let own: OwnRedis;
    let service: Billing;
    beforeAll(async () => {
      own = await ownRedis();
      await own.start();
      service = await startBilling(own.url);
    });
    afterAll(async () => {
      await service.close();
      await own.close();
    });

    it('when Redis cannot drop the copy, then 503 and the Redis copy stays; called again once Redis is back, then done and the copy is gone', async () => {
      const tenantId = await billedTenant(service);
      expect(await mirrored(own.client, tenantId)).not.toBeNull();
      await own.save();
      await own.kill();

      expect((await deleteTenant(service, tenantId)).status).toBe(503);

      await own.start();
      await waitForRedis(own.client);
      expect(await mirrored(own.client, tenantId)).not.toBeNull();
      let res = await deleteTenant(service, tenantId);
      // The service's own client may still be reconnecting.
      for (let i = 0; res.status === 503 && i < 50; i += 1) {
        await new Promise((r) => setTimeout(r, 100));
        res = await deleteTenant(service, tenantId);
      }
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ done: true, deletedRows: 0 });
      expect(await own.client.exists(subscriptionKey(tenantId))).toBe(0);
      expect(await heldOf(service.pool, tenantId)).toEqual({ subscriptions: 0, outbox: 0 });
    });
  });
});
