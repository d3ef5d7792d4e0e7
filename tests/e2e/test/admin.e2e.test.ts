import { describe, expect, it } from '@jest/globals';
import { admin, newTenant } from './support.js';

describe('operator API through the ingress', () => {
  it.each([[''], ['wrong-token']])(
    'when the admin token is %p, then 401 and nothing is created',
    async (token) => {
      const res = await admin('POST', '/tenants', { name: 'Nope' }, token);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 'unauthenticated' });
    },
  );

  it('when a tenant and a key are created, then the documented shapes come back', async () => {
    const tenantId = await newTenant('Admin E2E');
    const res = await admin('POST', `/tenants/${tenantId}/api-keys`, {
      kind: 'secret',
      scopes: ['contacts:read', 'contacts:export'],
      name: 'exporter',
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({
      clientId: expect.stringMatching(/^ck_/),
      secret: expect.stringMatching(/^sk_/),
      kind: 'secret',
      scopes: ['contacts:read', 'contacts:export'],
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
  });

  it('when the tenant is unknown, then 404; when the body is bad, then 400', async () => {
    expect(
      (
        await admin('POST', '/tenants/6f1c1b7e-0000-4000-8000-000000000000/api-keys', {
          kind: 'secret',
        })
      ).status,
    ).toBe(404);
    const bad = await admin('POST', '/tenants', { name: '' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'validation_error' });
  });
});
