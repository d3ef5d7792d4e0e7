// POST /admin/v1/tenants/{tenantId}/organizations: the operator API.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { errors } from '@herald/errors';
import {
  ADMIN_TOKEN,
  SERVICE_TOKEN,
  startContactsService,
  TIMESTAMP,
  type TestContactsService,
} from '../support.js';

let svc: TestContactsService;
beforeAll(async () => {
  svc = await startContactsService();
});
afterAll(() => svc.close());

const create = (tenantId: string, body: unknown, token?: string) =>
  svc.admin(`/tenants/${tenantId}/organizations`, body, token);

async function organizationsOf(tenantId: string) {
  const { rows } = await svc.pool.query(
    'select external_id, name from organizations where tenant_id = $1 order by external_id',
    [tenantId],
  );
  return rows;
}

describe('creating an organization', () => {
  it('when the tenant exists, then 201 with externalId, name and an RFC 3339 UTC createdAt with milliseconds', async () => {
    const { tenantId } = svc.newTenant();

    const res = await create(tenantId, { externalId: 'org-42', name: 'Globex' });

    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toStrictEqual({
      externalId: 'org-42',
      name: 'Globex',
      createdAt: expect.stringMatching(TIMESTAMP),
    });
    expect(await organizationsOf(tenantId)).toEqual([{ external_id: 'org-42', name: 'Globex' }]);
  });

  it('when no name is given, then 201 with name null', async () => {
    const { tenantId } = svc.newTenant();

    const res = await create(tenantId, { externalId: 'org-1' });

    expect(res.status).toBe(201);
    expect(await res.json()).toStrictEqual({
      externalId: 'org-1',
      name: null,
      createdAt: expect.stringMatching(TIMESTAMP),
    });
  });

  it('when the externalId has a slash, unicode or 255 characters, then it is kept exactly', async () => {
    const { tenantId } = svc.newTenant();
    for (const externalId of ['acme/emea', 'Société Générale ✓', 'o'.repeat(255)]) {
      const res = await create(tenantId, { externalId });

      expect(res.status).toBe(201);
      expect((await res.json()).externalId).toBe(externalId);
    }
  });

  it('when the externalId already exists in the tenant, then 409 conflict and the first one is kept', async () => {
    const { tenantId } = svc.newTenant();
    await create(tenantId, { externalId: 'org-1', name: 'First' });

    const res = await create(tenantId, { externalId: 'org-1', name: 'Second' });

    expect(res.status).toBe(409);
    expect(await res.json()).toStrictEqual({ code: 'conflict', message: expect.any(String) });
    expect(await organizationsOf(tenantId)).toEqual([{ external_id: 'org-1', name: 'First' }]);
  });

  it('when externalIds differ only in case, then they are two organizations', async () => {
    const { tenantId } = svc.newTenant();

    expect((await create(tenantId, { externalId: 'Org-1' })).status).toBe(201);
    expect((await create(tenantId, { externalId: 'org-1' })).status).toBe(201);
  });

  it('when another tenant has the same externalId, then 201 (unique per tenant)', async () => {
    const a = svc.newTenant();
    const b = svc.newTenant();
    await create(a.tenantId, { externalId: 'org-1' });

    const res = await create(b.tenantId, { externalId: 'org-1' });

    expect(res.status).toBe(201);
  });

  it('when the same organization is created in parallel, then one 201 and the rest 409, never a 500', async () => {
    const { tenantId } = svc.newTenant();

    const answers = await Promise.all(
      Array.from({ length: 10 }, () => create(tenantId, { externalId: 'org-race' })),
    );

    expect(answers.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)]);
    expect(await organizationsOf(tenantId)).toHaveLength(1);
  });

  it.each([
    ['an unknown tenant', randomUUID()],
    ['a tenant id that is not a uuid', 'not-a-tenant'],
  ])('when the route names %s, then 404 not_found and nothing is stored', async (_, tenantId) => {
    const res = await create(tenantId, { externalId: 'org-1' });

    expect(res.status).toBe(404);
    expect(await res.json()).toStrictEqual({ code: 'not_found', message: expect.any(String) });
    const { rows } = await svc.pool.query(
      'select count(*)::int as n from organizations where tenant_id::text = $1',
      [tenantId],
    );
    expect(rows[0].n).toBe(0);
  });

  it('when the tenant directory (the auth service) is unreachable, then 503 service_unavailable with Retry-After', async () => {
    const unreachable = await startContactsService({
      tenantExists: async () => {
        throw errors.unavailable('cannot reach the auth service; retry later');
      },
    });
    try {
      const res = await unreachable.admin(`/tenants/${randomUUID()}/organizations`, {
        externalId: 'org-1',
      });

      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBeTruthy();
      expect(await res.json()).toMatchObject({ code: 'service_unavailable' });
    } finally {
      await unreachable.close();
    }
  });

  it.each([
    ['an empty object', 'body.externalId', {}],
    ['an empty externalId', 'body.externalId', { externalId: '' }],
    ['an externalId of 256 characters', 'body.externalId', { externalId: 'o'.repeat(256) }],
    ['an externalId with a control character', 'body.externalId', { externalId: 'a\u0000b' }],
    ['an externalId with an unpaired surrogate', 'body.externalId', { externalId: 'x\udc00' }],
    ['a name with an unpaired surrogate', 'body.name', { externalId: 'org-1', name: 'G\ud800' }],
    ['a numeric externalId', 'body.externalId', { externalId: 42 }],
    ['a null externalId', 'body.externalId', { externalId: null }],
    ['an empty name', 'body.name', { externalId: 'org-1', name: '' }],
    ['a name of 257 characters', 'body.name', { externalId: 'org-1', name: 'n'.repeat(257) }],
    ['a numeric name', 'body.name', { externalId: 'org-1', name: 7 }],
    ['an array', 'body', [{ externalId: 'org-1' }]],
    ['a string', 'body', 'org-1'],
  ])('when the body is %s, then 400 validation_error naming %s', async (_, field, body) => {
    const { tenantId } = svc.newTenant();

    const res = await create(tenantId, body);

    expect(res.status).toBe(400);
    const error = await res.json();
    expect(error).toStrictEqual({ code: 'validation_error', message: expect.any(String) });
    expect(error.message).toMatch(new RegExp(`^${field.replace('.', '\\.')}:`));
    expect(await organizationsOf(tenantId)).toEqual([]);
  });

  it('when externalIds differ only in an unpaired surrogate, then each is a 400, not one organization and a 409', async () => {
    const { tenantId } = svc.newTenant();

    for (const externalId of ['x\ud800', 'x\udc00']) {
      const res = await create(tenantId, { externalId });

      expect({ status: res.status, body: await res.json() }).toStrictEqual({
        status: 400,
        body: {
          code: 'validation_error',
          message: 'body.externalId: must be well-formed Unicode, without an unpaired surrogate',
        },
      });
    }
    expect(await organizationsOf(tenantId)).toEqual([]);
  });

  it('when the Content-Type is not application/json, then 400 validation_error', async () => {
    const { tenantId } = svc.newTenant();

    const res = await fetch(`${svc.url}/admin/v1/tenants/${tenantId}/organizations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/plain' },
      body: JSON.stringify({ externalId: 'org-1' }),
    });

    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'validation_error' });
  });

  it('when the admin token is missing or wrong (the service token, a customer token), then 401 and nothing is created', async () => {
    const { tenantId, token: customerToken } = svc.newTenant();
    for (const token of ['wrong-admin-token', SERVICE_TOKEN, customerToken]) {
      const res = await create(tenantId, { externalId: 'org-1' }, token);

      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 'unauthenticated' });
    }
    const anonymous = await fetch(`${svc.url}/admin/v1/tenants/${tenantId}/organizations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ externalId: 'org-1' }),
    });
    expect(anonymous.status).toBe(401);
    expect(await organizationsOf(tenantId)).toEqual([]);
  });

  it('when the admin token is wrong and the tenant unknown, then 401 (the token is checked first)', async () => {
    const res = await create(randomUUID(), { externalId: 'org-1' }, 'wrong-admin-token');

    expect(res.status).toBe(401);
  });

  it('when the method is DELETE, then 405 with Allow POST, GET', async () => {
    const { tenantId } = svc.newTenant();

    const res = await svc.request('DELETE', `/admin/v1/tenants/${tenantId}/organizations`, {
      token: ADMIN_TOKEN,
    });

    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST, GET');
    expect(await res.json()).toMatchObject({ code: 'method_not_allowed' });
  });

  it('when an organization is created, then identity resolution finds it', async () => {
    const { tenantId } = svc.newTenant();
    await create(tenantId, { externalId: 'org-found' });

    const res = await svc.resolve({
      tenantId,
      items: [{ organizationExternalId: 'org-found' }, { organizationExternalId: 'org-missing' }],
    });

    expect(await res.json()).toEqual({
      items: [
        { contactId: null, organizationExists: true },
        { contactId: null, organizationExists: false },
      ],
    });
  });
});
