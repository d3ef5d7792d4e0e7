// The operator API's answers: counting, the setting, suspension, reactivation,
// and the refusals (401, 404, 405, 503).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { errors } from '@herald/errors';
import {
  ADMIN_TOKEN,
  SERVICE_TOKEN,
  startBillingService,
  type TestBillingService,
} from '../support.js';

const routes = [
  ['GET', 'billing'],
  ['POST', 'billing/payment-failures'],
  ['POST', 'billing/payment-details'],
] as const;

describe('billing operator API', () => {
  let svc: TestBillingService;
  beforeAll(async () => {
    svc = await startBillingService();
  });
  afterAll(() => svc.close());

  it('when a Tenant never had a billing event, then it is active with no failures and no row', async () => {
    const tenantId = svc.newTenant();
    const res = await svc.admin('GET', `${tenantId}/billing`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toStrictEqual({ state: 'active', consecutiveFailures: 0 });
    expect(await svc.stored(tenantId)).toBeUndefined();
  });

  it('when payments fail, then they are counted and the third suspends; later ones keep counting', async () => {
    const tenantId = svc.newTenant();
    expect(await svc.fail(tenantId)).toStrictEqual({ state: 'active', consecutiveFailures: 1 });
    expect(await svc.fail(tenantId)).toStrictEqual({ state: 'active', consecutiveFailures: 2 });
    expect(await svc.fail(tenantId)).toStrictEqual({ state: 'suspended', consecutiveFailures: 3 });
    expect(await svc.fail(tenantId)).toStrictEqual({ state: 'suspended', consecutiveFailures: 4 });

    const res = await svc.admin('GET', `${tenantId}/billing`);
    expect(await res.json()).toStrictEqual({ state: 'suspended', consecutiveFailures: 4 });
    expect(await svc.stored(tenantId)).toMatchObject({
      state: 'suspended',
      consecutiveFailures: 4,
      version: 4,
    });
  });

  it('when payment details are updated, then active again with no failures, and counting starts over', async () => {
    const tenantId = svc.newTenant();
    for (let i = 0; i < 3; i += 1) await svc.fail(tenantId);

    expect(await svc.updateDetails(tenantId)).toStrictEqual({
      state: 'active',
      consecutiveFailures: 0,
    });
    expect(await svc.stored(tenantId)).toMatchObject({ state: 'active', version: 4 });
    expect(await svc.fail(tenantId)).toStrictEqual({ state: 'active', consecutiveFailures: 1 });
    expect(await svc.fail(tenantId)).toStrictEqual({ state: 'active', consecutiveFailures: 2 });
    expect(await svc.fail(tenantId)).toStrictEqual({ state: 'suspended', consecutiveFailures: 3 });
  });

  it('when failures were not consecutive (details updated between), then they do not add up', async () => {
    const tenantId = svc.newTenant();
    await svc.fail(tenantId);
    await svc.fail(tenantId);
    await svc.updateDetails(tenantId);
    expect(await svc.fail(tenantId)).toStrictEqual({ state: 'active', consecutiveFailures: 1 });
  });

  it('when payment details are updated with nothing to change, then 200 active and nothing changes', async () => {
    const never = svc.newTenant();
    expect(await svc.updateDetails(never)).toStrictEqual({
      state: 'active',
      consecutiveFailures: 0,
    });
    expect(await svc.stored(never)).toBeUndefined();

    const reset = svc.newTenant();
    await svc.fail(reset);
    await svc.updateDetails(reset);
    await svc.updateDetails(reset);
    expect(await svc.stored(reset)).toMatchObject({ consecutiveFailures: 0, version: 2 });
  });

  it('when a body is sent to a POST, then it is ignored', async () => {
    const tenantId = svc.newTenant();
    const res = await svc.request(
      'POST',
      `/admin/v1/tenants/${tenantId}/billing/payment-failures`,
      {
        token: ADMIN_TOKEN,
        body: { consecutiveFailures: 99, state: 'active' },
      },
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toStrictEqual({ state: 'active', consecutiveFailures: 1 });
  });

  it('when the Tenant id is upper-case, then it names the same Tenant', async () => {
    const tenantId = svc.newTenant();
    await svc.fail(tenantId);
    const res = await svc.admin('GET', `${tenantId.toUpperCase()}/billing`);
    expect(await res.json()).toStrictEqual({ state: 'active', consecutiveFailures: 1 });
  });

  it.each(routes)(
    'when %s %s has no or a wrong admin token, then 401 and nothing changes',
    async (method, route) => {
      const tenantId = svc.newTenant();
      for (const token of ['', 'wrong-token', SERVICE_TOKEN]) {
        const res = await svc.admin(method, `${tenantId}/${route}`, token);
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
        expect(await res.json()).toStrictEqual({
          code: 'unauthenticated',
          message: expect.any(String),
        });
      }
      expect(await svc.stored(tenantId)).toBeUndefined();
    },
  );

  it.each(routes)(
    'when %s %s names an unknown or malformed Tenant, then 404 not_found',
    async (method, route) => {
      for (const tenantId of [randomUUID(), 'not-a-uuid', '1234']) {
        const res = await svc.admin(method, `${tenantId}/${route}`);
        expect(res.status).toBe(404);
        expect(await res.json()).toStrictEqual({ code: 'not_found', message: 'no such tenant' });
      }
      const unknown = randomUUID();
      await svc.admin(method, `${unknown}/${route}`);
      expect(await svc.stored(unknown)).toBeUndefined();
    },
  );

  it.each([
    ['POST', 'billing', 'GET'],
    ['DELETE', 'billing', 'GET'],
    ['GET', 'billing/payment-failures', 'POST'],
    ['PUT', 'billing/payment-details', 'POST'],
  ])('when %s %s, then 405 allowing %s', async (method, route, allowed) => {
    const tenantId = svc.newTenant();
    const res = await svc.admin(method, `${tenantId}/${route}`);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe(allowed);
    expect(await res.json()).toStrictEqual({
      code: 'method_not_allowed',
      message: expect.any(String),
    });
    expect(await svc.stored(tenantId)).toBeUndefined();
  });

  it('when a sub-path is unknown, then 404', async () => {
    const res = await svc.admin('POST', `${svc.newTenant()}/billing/refunds`);
    expect(res.status).toBe(404);
  });
});

describe('billing operator API with another setting', () => {
  it('when BILLING_SUSPEND_AFTER_FAILURES is 1, then the first failure suspends', async () => {
    const svc = await startBillingService({ suspendAfterFailures: 1 });
    try {
      const tenantId = svc.newTenant();
      expect(await svc.fail(tenantId)).toStrictEqual({
        state: 'suspended',
        consecutiveFailures: 1,
      });
    } finally {
      await svc.close();
    }
  });

  it('when the setting is raised while a Tenant is suspended, then it stays suspended', async () => {
    const strict = await startBillingService({ suspendAfterFailures: 2 });
    const tenantId = strict.newTenant();
    try {
      await strict.fail(tenantId);
      expect(await strict.fail(tenantId)).toMatchObject({ state: 'suspended' });
    } finally {
      await strict.close();
    }
    const lenient = await startBillingService({ suspendAfterFailures: 5 });
    lenient.tenants.add(tenantId);
    try {
      expect(await lenient.fail(tenantId)).toStrictEqual({
        state: 'suspended',
        consecutiveFailures: 3,
      });
    } finally {
      await lenient.close();
    }
  });
});

describe('billing with its dependencies down', () => {
  it('when the auth service is unreachable, then 503 with Retry-After and nothing changes', async () => {
    const svc = await startBillingService({
      tenantExists: () => Promise.reject(errors.unavailable('cannot reach the auth service')),
    });
    try {
      const tenantId = randomUUID();
      const res = await svc.admin('POST', `${tenantId}/billing/payment-failures`);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBeTruthy();
      expect(await res.json()).toMatchObject({ code: 'service_unavailable' });
      expect(await svc.stored(tenantId)).toBeUndefined();
    } finally {
      await svc.close();
    }
  });

  it('when PostgreSQL is unreachable, then 503 service_unavailable with Retry-After', async () => {
    const svc = await startBillingService({
      databaseUrl: 'postgres://herald@127.0.0.1:1/herald_billing_test',
    });
    try {
      const tenantId = svc.newTenant();
      for (const [method, route] of routes) {
        const res = await svc.admin(method, `${tenantId}/${route}`);
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toBeTruthy();
        expect(await res.json()).toMatchObject({ code: 'service_unavailable' });
      }
      const internal = await svc.request('GET', `/internal/v1/tenants/${tenantId}/subscription`, {
        token: SERVICE_TOKEN,
      });
      expect(internal.status).toBe(503);
      const ready = await svc.request('GET', '/readyz');
      expect(ready.status).toBe(503);
    } finally {
      await svc.close();
    }
  });
});
