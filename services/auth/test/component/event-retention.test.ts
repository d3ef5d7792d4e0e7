// How long a Tenant's Events are kept: the operator routes that read and set it, and the internal
// route the events service's sweep reads every Tenant's retention from.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { authRoutes } from '@herald/internal-api';
import { createTestRequester } from '@herald/testing';
import {
  ADMIN_TOKEN,
  EVENTS_SERVICE_TOKEN,
  SERVICE_TOKEN,
  startAuthService,
  type TestAuthService,
} from '../support.js';

// Not the setting's own default, so that an answer shows where it came from.
const DEFAULT_DAYS = 400;

let auth: TestAuthService;
let request: ReturnType<typeof createTestRequester>;
beforeAll(async () => {
  auth = await startAuthService({ eventRetentionDefaultDays: DEFAULT_DAYS });
  request = createTestRequester(auth.url);
});
afterAll(() => auth.close());

async function newTenant(): Promise<string> {
  const res = await auth.admin('/tenants', { name: 'Retention' });
  expect(res.status).toBe(201);
  return (await res.json<{ id: string }>()).id;
}

const path = (tenantId: string) => `/admin/v1/tenants/${tenantId}/event-retention`;
const read = (tenantId: string) => request('GET', path(tenantId), { token: ADMIN_TOKEN });
const set = (tenantId: string, body: unknown) =>
  request('PUT', path(tenantId), { token: ADMIN_TOKEN, body });

interface Overview {
  defaultDays: number;
  tenants: Array<{ tenantId: string; days: number }>;
}

async function overview(token = EVENTS_SERVICE_TOKEN) {
  const res = await fetch(`${auth.url}/internal/v1/event-retention`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: res.status, body: res.status === 200 ? await res.json<Overview>() : null };
}

describe('operator API: a Tenant’s Event retention', () => {
  it('when a Tenant is new, then its retention is the installation default', async () => {
    const tenantId = await newTenant();
    const res = await read(tenantId);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      days: DEFAULT_DAYS,
      source: 'default',
      defaultDays: DEFAULT_DAYS,
    });
  });

  it('when a retention is set, then the answer and every later read give it as the Tenant’s own', async () => {
    const tenantId = await newTenant();
    const res = await set(tenantId, { days: 30 });
    expect(res.status).toBe(200);
    const own = { days: 30, source: 'tenant', defaultDays: DEFAULT_DAYS };
    expect(await res.json()).toEqual(own);
    expect(await (await read(tenantId)).json()).toEqual(own);
    const { rows } = await auth.pool.query(
      'select event_retention_days from tenants where id = $1',
      [tenantId],
    );
    expect(rows).toEqual([{ event_retention_days: 30 }]);
  });

  it('when it is set to null, then the Tenant is back at the default, stored as no value of its own', async () => {
    const tenantId = await newTenant();
    await set(tenantId, { days: 30 });
    const res = await set(tenantId, { days: null });
    expect(res.status).toBe(200);
    const back = { days: DEFAULT_DAYS, source: 'default', defaultDays: DEFAULT_DAYS };
    expect(await res.json()).toEqual(back);
    expect(await (await read(tenantId)).json()).toEqual(back);
    const { rows } = await auth.pool.query(
      'select event_retention_days from tenants where id = $1',
      [tenantId],
    );
    expect(rows).toEqual([{ event_retention_days: null }]);
  });

  it('when it is set to the default’s value, then it stays the Tenant’s own (a later default does not move it)', async () => {
    const tenantId = await newTenant();
    const res = await set(tenantId, { days: DEFAULT_DAYS });
    expect(await res.json()).toEqual({
      days: DEFAULT_DAYS,
      source: 'tenant',
      defaultDays: DEFAULT_DAYS,
    });
  });

  it.each([1, 3650])(
    'when the retention is %p days (a bound), then it is accepted',
    async (days) => {
      const tenantId = await newTenant();
      const res = await set(tenantId, { days });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ days, source: 'tenant' });
    },
  );

  it.each([
    [{ days: 0 }, 'body.days: Too small: expected number to be >=1'],
    [{ days: -5 }, 'body.days: Too small: expected number to be >=1'],
    [{ days: 3651 }, 'body.days: Too big: expected number to be <=3650'],
    [{ days: 1.5 }, 'body.days: Invalid input: expected int, received number'],
    [{ days: '30' }, 'body.days: Invalid input: expected number, received string'],
    [{}, 'body.days: Invalid input: expected number, received undefined'],
  ])(
    'when the body is %p, then 400 validation_error and the retention is unchanged',
    async (body, message) => {
      const tenantId = await newTenant();
      await set(tenantId, { days: 90 });
      const res = await set(tenantId, body);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ code: 'validation_error', message });
      expect(await (await read(tenantId)).json()).toMatchObject({ days: 90, source: 'tenant' });
    },
  );

  it('when the Tenant does not exist or its id is malformed, then reading and setting answer 404 not_found', async () => {
    for (const tenantId of ['00000000-0000-4000-8000-000000000000', 'nope']) {
      for (const res of [await read(tenantId), await set(tenantId, { days: 30 })]) {
        expect(res.status).toBe(404);
        expect(await res.json()).toEqual({ code: 'not_found', message: 'no such tenant' });
      }
    }
  });

  it('when the Tenant is being deleted, then reading and setting answer 404, as for every operator route', async () => {
    const tenantId = await newTenant();
    await auth.pool.query('update tenants set deletion_requested_at = now() where id = $1', [
      tenantId,
    ]);
    expect((await read(tenantId)).status).toBe(404);
    expect((await set(tenantId, { days: 30 })).status).toBe(404);
  });

  it('when the admin token is missing or wrong, then 401 and nothing changes', async () => {
    const tenantId = await newTenant();
    for (const token of [undefined, 'nope']) {
      expect((await request('GET', path(tenantId), { token })).status).toBe(401);
      const res = await request('PUT', path(tenantId), { token, body: { days: 30 } });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 'unauthenticated' });
    }
    expect(await (await read(tenantId)).json()).toMatchObject({ source: 'default' });
  });

  it('when another method is sent, then 405 with Allow: GET, PUT', async () => {
    const tenantId = await newTenant();
    const res = await request('POST', path(tenantId), { token: ADMIN_TOKEN, body: { days: 30 } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, PUT');
  });
});

describe('internal: every Tenant’s Event retention', () => {
  it('when Tenants have retentions of their own, then the answer has the default and exactly the Tenants whose retention differs from it', async () => {
    const [shorter, longer, sameAsDefault, reset, atDefault] = await Promise.all(
      Array.from({ length: 5 }, newTenant),
    );
    await set(shorter!, { days: 30 });
    await set(longer!, { days: 3650 });
    await set(sameAsDefault!, { days: DEFAULT_DAYS });
    await set(reset!, { days: 7 });
    await set(reset!, { days: null });

    const { status, body } = await overview();
    expect(status).toBe(200);
    // What the events service's client checks the answer against.
    expect(authRoutes.eventRetentionOverview.answer.parse(body)).toEqual(body);
    expect(body!.defaultDays).toBe(DEFAULT_DAYS);
    // Other tests (and the stack, on the same database) have Tenants too: only these are judged.
    const mine = new Set([shorter, longer, sameAsDefault, reset, atDefault]);
    expect(
      body!.tenants.filter((t) => mine.has(t.tenantId)).sort((a, b) => a.days - b.days),
    ).toEqual([
      { tenantId: shorter, days: 30 },
      { tenantId: longer, days: 3650 },
    ]);
  });

  it('when a service other than events, or the admin, asks, then 403 or 401', async () => {
    expect((await overview(SERVICE_TOKEN)).status).toBe(403);
    expect((await overview(ADMIN_TOKEN)).status).toBe(401);
  });
});
