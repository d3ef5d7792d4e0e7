// The guard every public route uses, in a small app against real Redis (single node and the
// local three-master Cluster). Billing is replaced by a table here; the billing service's own
// route is tested in services/billing and end to end through the ingress.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { createHttpApp, startServer, type RunningServer } from '@herald/http';
import { createRedis, waitForRedis, type Redis } from '@herald/redis';
import {
  createTestRequester,
  createTestSigner,
  createTestVerifier,
  signTestAccessToken,
} from '@herald/testing';
import {
  createApiPolicy,
  storeSubscriptionState,
  subscriptionKey,
  type SubscriptionSnapshot,
  type SubscriptionSource,
} from '../src/index.js';

const single = process.env.REDIS_URL ?? 'redis://127.0.0.1:56379';
const clusterNodes = (
  process.env.HERALD_REDIS_CLUSTER_NODES ??
  'redis://127.0.0.1:56380,redis://127.0.0.1:56381,redis://127.0.0.1:56382'
).split(',');

const signer = createTestSigner();
const logger = pino({ level: 'silent' });

/** Billing's answers by Tenant; `null` = billing unreachable. Counts the calls. */
function billingTable() {
  const states = new Map<string, SubscriptionSnapshot | null>();
  const calls: string[] = [];
  const source: SubscriptionSource = {
    fetch: (tenantId) => {
      calls.push(tenantId);
      const known = states.get(tenantId);
      return Promise.resolve(
        known === undefined ? { state: 'active', consecutiveFailures: 0, version: 0 } : known,
      );
    },
  };
  return { states, calls, source };
}

const BUDGETS = {
  read: { refillPerSecond: 2, burst: 3 },
  write: { refillPerSecond: 2, burst: 4 },
};

async function startApp(redis: Redis, billing: SubscriptionSource, budgets = BUDGETS) {
  const policy = createApiPolicy({
    verifier: createTestVerifier(signer),
    redis,
    logger,
    subscriptions: billing,
    budgets,
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
      app.post(
        '/things/by-email',
        policy.guard({ scope: 'events:write', identifierLookup: true }),
        (_req, res) => {
          res.status(202).json({ accepted: 1 });
        },
      );
      app.post(
        '/things/erase',
        policy.guard({ scope: 'contacts:erase', allowedWhileSuspended: true }),
        (_req, res) => {
          res.status(204).end();
        },
      );
    },
  });
  return startServer(app, { host: '127.0.0.1', port: 0, logger, shutdownTimeoutMs: 1_000 });
}

function newKey(scopes = ['contacts:read', 'contacts:write', 'contacts:erase']) {
  const tenantId = randomUUID();
  const token = signTestAccessToken(signer, tenantId, scopes);
  return { tenantId, token };
}

describe.each([
  ['a single node', () => createRedis({ url: single })],
  ['a three-master Redis Cluster', () => createRedis({ clusterNodes })],
])('the API guard with %s', (_name, connect) => {
  let redis: Redis;
  let server: RunningServer;
  const billing = billingTable();
  let request: ReturnType<typeof createTestRequester>;

  beforeAll(async () => {
    redis = connect();
    await waitForRedis(redis, 15_000);
    server = await startApp(redis, billing.source);
    request = createTestRequester(server.url);
  });
  afterAll(async () => {
    await server.close();
    await redis.close();
  });

  it('when a key spends its read burst, then it gets 429 with Retry-After and the RateLimit headers, and gets through after waiting', async () => {
    const { token } = newKey();
    const answers = [];
    for (let i = 0; i < 4; i += 1) answers.push(await request('GET', '/things', { token }));

    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(answers[0]!.headers.get('ratelimit-limit')).toBe('3');
    expect(answers.map((r) => r.headers.get('ratelimit-remaining'))).toEqual(['2', '1', '0', '0']);
    const limited = answers[3]!;
    expect(await limited.json()).toEqual({ code: 'rate_limited', message: expect.any(String) });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBe(1);
    expect(Number(limited.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);

    await new Promise((r) => setTimeout(r, retryAfter * 1000));
    expect((await request('GET', '/things', { token })).status).toBe(200);
  });

  it('when reads are used up, then writes of the same key still pass (two budgets) and other keys are untouched', async () => {
    const { token } = newKey();
    for (let i = 0; i < 3; i += 1) await request('GET', '/things', { token });
    expect((await request('GET', '/things', { token })).status).toBe(429);

    const write = await request('POST', '/things', { token });
    expect(write.status).toBe(201);
    expect(write.headers.get('ratelimit-limit')).toBe('4');
    expect(write.headers.get('ratelimit-remaining')).toBe('3');
    expect((await request('GET', '/things', { token: newKey().token })).status).toBe(200);
  });

  it('when the key lacks the scope, then the answer is 403 and still carries the budget headers', async () => {
    const { token } = newKey(['events:write']);
    const res = await request('GET', '/things', { token });
    expect(res.status).toBe(403);
    expect(res.headers.get('ratelimit-remaining')).toBe('2');
  });

  it('when a publishable key without identifierLookup calls a route that looks identifiers up, then 403 forbidden; with it, or with a secret key, it passes', async () => {
    const tenantId = randomUUID();
    const pk = (claims?: Record<string, unknown>) =>
      signTestAccessToken(signer, tenantId, ['events:write'], {
        clientId: `pk_test${randomUUID().slice(0, 8)}`,
        ...(claims ? { claims } : {}),
      });
    const refused = await request('POST', '/things/by-email', { token: pk() });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({
      code: 'forbidden',
      message: expect.stringContaining('publishable key records Events by contactId only'),
    });
    const opted = pk({ identifier_lookup: true });
    expect((await request('POST', '/things/by-email', { token: opted })).status).toBe(202);
    const secret = signTestAccessToken(signer, tenantId, ['events:write']);
    expect((await request('POST', '/things/by-email', { token: secret })).status).toBe(202);
  });

  it('when a publishable key with allowed Origins is used from another Origin or none, then 403 before its budget is spent; from its Origin it passes', async () => {
    const token = signTestAccessToken(signer, randomUUID(), ['contacts:read'], {
      clientId: `pk_test${randomUUID().slice(0, 8)}`,
      claims: { allowed_origins: ['https://shop.example'] },
    });
    for (const headers of [{ origin: 'https://evil.example' }, {}] as Record<string, string>[]) {
      for (let i = 0; i < 4; i += 1) {
        const res = await request('GET', '/things', { token, headers });
        expect(res.status).toBe(403);
        expect(res.headers.get('ratelimit-remaining')).toBeNull();
        expect(await res.json()).toMatchObject({ code: 'forbidden' });
      }
    }
    const ok = await request('GET', '/things', {
      token,
      headers: { origin: 'https://shop.example' },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('ratelimit-remaining')).toBe('2');
  });

  it('when the token is missing, then 401 comes before any budget', async () => {
    const res = await request('GET', '/things');
    expect(res.status).toBe(401);
    expect(res.headers.get('ratelimit-limit')).toBeNull();
  });

  it('when the Tenant is suspended in the Redis mirror, then writes answer 402 problem details, reads and erase work, billing is not asked', async () => {
    const { tenantId, token } = newKey();
    await storeSubscriptionState(redis, tenantId, {
      state: 'suspended',
      consecutiveFailures: 3,
      version: 3,
    });
    const asked = billing.calls.length;

    const write = await request('POST', '/things', { token });
    expect(write.status).toBe(402);
    expect(write.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await write.json()).toEqual({
      type: 'subscription_suspended',
      title: expect.any(String),
      status: 402,
      detail: expect.any(String),
    });
    expect((await request('GET', '/things', { token })).status).toBe(200);
    expect((await request('POST', '/things/erase', { token })).status).toBe(204);
    expect(billing.calls.length).toBe(asked);

    await storeSubscriptionState(redis, tenantId, {
      state: 'active',
      consecutiveFailures: 0,
      version: 4,
    });
    expect((await request('POST', '/things', { token })).status).toBe(201);
  });

  it('when the mirror has no snapshot (Redis flushed), then billing is asked and its answer holds', async () => {
    const { tenantId, token } = newKey();
    billing.states.set(tenantId, { state: 'suspended', consecutiveFailures: 5, version: 9 });
    await redis.del(subscriptionKey(tenantId));

    expect((await request('POST', '/things', { token })).status).toBe(402);
    expect(billing.calls).toContain(tenantId);
  });

  it('when neither the mirror nor billing can tell, then the write is served (fail open)', async () => {
    const { tenantId, token } = newKey();
    billing.states.set(tenantId, null);
    expect((await request('POST', '/things', { token })).status).toBe(201);
  });
});

describe('the API guard without Redis', () => {
  let redis: Redis;
  let server: RunningServer;
  const billing = billingTable();
  beforeAll(async () => {
    redis = createRedis({ url: 'redis://127.0.0.1:9' });
    server = await startApp(redis, billing.source);
  });
  afterAll(async () => {
    await server.close();
    await redis.close();
  });

  it('when Redis is unreachable, then requests are served without budget headers and suspension still comes from billing', async () => {
    const request = createTestRequester(server.url);
    const { token } = newKey();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => request('GET', '/things', { token })),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(answers[0]!.headers.get('ratelimit-limit')).toBeNull();

    const suspended = newKey();
    billing.states.set(suspended.tenantId, {
      state: 'suspended',
      consecutiveFailures: 3,
      version: 1,
    });
    expect((await request('POST', '/things', { token: suspended.token })).status).toBe(402);
  });
});

describe('Retry-After with a slow refill', () => {
  let redis: Redis;
  let server: RunningServer;
  beforeAll(async () => {
    redis = createRedis({ url: single });
    await waitForRedis(redis);
    // One read every 4 s: Retry-After must say 4, and mean it.
    server = await startApp(redis, billingTable().source, {
      ...BUDGETS,
      read: { refillPerSecond: 0.25, burst: 1 },
    });
  });
  afterAll(async () => {
    await server.close();
    await redis.close();
  });

  it('when the refill is slow, then Retry-After says how long, waiting less is refused and waiting that long gets through', async () => {
    const request = createTestRequester(server.url);
    const { token } = newKey();
    expect((await request('GET', '/things', { token })).status).toBe(200);
    const limited = await request('GET', '/things', { token });
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBe(4);
    expect(limited.headers.get('ratelimit-reset')).toBe('4');

    await new Promise((r) => setTimeout(r, (retryAfter - 1) * 1000));
    expect((await request('GET', '/things', { token })).status).toBe(429);
    // The refused request did not cost anything: one more second is enough.
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await request('GET', '/things', { token })).status).toBe(200);
  });
});
