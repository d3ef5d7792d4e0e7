// The guard's refusals as metrics (policy.refused by rule, policy.fail_open), in a small app
// against the real single-node Redis; an in-memory reader registered before the guard is made,
// as the telemetry preload registers the SDK's before a service builds its guard.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { DataPoint } from '@opentelemetry/sdk-metrics';
import { installTestMetricReader } from '@herald/telemetry/testing';
import { pino } from 'pino';
import { createHttpApp, startServer, type RunningServer } from '@herald/http';
import { createRedis, waitForRedis, type Redis } from '@herald/redis';
import {
  createTestRequester,
  createTestSigner,
  createTestVerifier,
  signTestAccessToken,
} from '@herald/testing';
import { createApiPolicy, storeSubscriptionState } from '../src/index.js';

const reader = installTestMetricReader();

const signer = createTestSigner();
const logger = pino({ level: 'silent' });
let redis: Redis;
let server: RunningServer;
let request: ReturnType<typeof createTestRequester>;

async function refused(attributes: Record<string, string>): Promise<number> {
  const { resourceMetrics } = await reader.collect();
  return resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .filter((m) => m.descriptor.name === 'policy.refused')
    .flatMap((m) => m.dataPoints as Array<DataPoint<number>>)
    .filter((p) => Object.entries(attributes).every(([k, v]) => p.attributes[k] === v))
    .reduce((sum, p) => sum + p.value, 0);
}

beforeAll(async () => {
  redis = createRedis({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:56379' });
  await waitForRedis(redis, 15_000);
  const policy = createApiPolicy({
    verifier: createTestVerifier(signer),
    redis,
    logger,
    subscriptions: { fetch: () => Promise.resolve(null) },
    budgets: {
      read: { refillPerSecond: 0.01, burst: 1 },
      write: { refillPerSecond: 100, burst: 100 },
    },
  });
  const app = createHttpApp({
    logger,
    routes: (app) => {
      app.get('/things', policy.guard({ scope: 'contacts:read' }), (_req, res) => {
        res.json({ ok: true });
      });
      app.post('/things', policy.guard({ scope: 'contacts:write' }), (_req, res) => {
        res.status(201).json({ ok: true });
      });
    },
  });
  server = await startServer(app, { host: '127.0.0.1', port: 0, logger, shutdownTimeoutMs: 1_000 });
  request = createTestRequester(server.url);
});

afterAll(async () => {
  await server.close();
  await redis.close();
});

describe('before any refusal', () => {
  it('when nothing was refused yet, then every rule of policy.refused and policy.fail_open is there at 0', async () => {
    const { resourceMetrics } = await reader.collect();
    const series = resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .filter((m) => ['policy.refused', 'policy.fail_open'].includes(m.descriptor.name))
      .flatMap((m) =>
        (m.dataPoints as Array<DataPoint<number>>).map((p) => [
          m.descriptor.name,
          JSON.stringify(p.attributes),
          p.value,
        ]),
      );
    expect(series.sort()).toEqual(
      [
        ['policy.fail_open', '{"rule":"budget"}', 0],
        ['policy.fail_open', '{"rule":"subscription"}', 0],
        ['policy.refused', '{"rule":"budget","budget":"read"}', 0],
        ['policy.refused', '{"rule":"budget","budget":"write"}', 0],
        ['policy.refused', '{"rule":"publishable"}', 0],
        ['policy.refused', '{"rule":"scope"}', 0],
        ['policy.refused', '{"rule":"subscription"}', 0],
        ['policy.refused', '{"rule":"token"}', 0],
      ].sort(),
    );
  });
});

describe('policy.refused', () => {
  it('when requests are refused for their token, budget, scope and subscription, then each is counted under its rule, and nothing else is', async () => {
    const tenantId = randomUUID();
    const token = signTestAccessToken(signer, tenantId, ['contacts:read', 'contacts:write']);
    const readOnly = signTestAccessToken(signer, randomUUID(), ['contacts:read']);
    const before = {
      token: await refused({ rule: 'token' }),
      budget: await refused({ rule: 'budget', budget: 'read' }),
      scope: await refused({ rule: 'scope' }),
      subscription: await refused({ rule: 'subscription' }),
    };

    expect((await request('GET', '/things')).status).toBe(401);
    expect((await request('GET', '/things', { token: 'not-a-token' })).status).toBe(401);
    expect((await request('GET', '/things', { token })).status).toBe(200);
    expect((await request('GET', '/things', { token })).status).toBe(429);
    expect((await request('POST', '/things', { token: readOnly })).status).toBe(403);
    await storeSubscriptionState(redis, tenantId, {
      state: 'suspended',
      consecutiveFailures: 3,
      version: 3,
    });
    expect((await request('POST', '/things', { token })).status).toBe(402);

    expect({
      token: await refused({ rule: 'token' }),
      budget: await refused({ rule: 'budget', budget: 'read' }),
      scope: await refused({ rule: 'scope' }),
      subscription: await refused({ rule: 'subscription' }),
    }).toEqual({
      token: before.token + 2,
      budget: before.budget + 1,
      scope: before.scope + 1,
      subscription: before.subscription + 1,
    });
    // Labels are the rule (and the budget's kind): never a Tenant, key or path.
    const { resourceMetrics } = await reader.collect();
    const text = JSON.stringify(resourceMetrics.scopeMetrics);
    expect(text).not.toContain(tenantId);
    expect(text).not.toContain('/things');
  });
});
