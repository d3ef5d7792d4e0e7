import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN_TOKEN, SERVICE_TOKEN, startAuthService, type TestAuthService } from '../support.js';

let auth: TestAuthService;
beforeAll(async () => {
  auth = await startAuthService();
});
afterAll(() => auth.close());

async function newTenant(name = 'Acme') {
  const res = await auth.admin('/tenants', { name });
  expect(res.status).toBe(201);
  return res.json<{ id: string; name: string; createdAt: string }>();
}

describe('operator API: tenants', () => {
  it('when a tenant is created, then 201 with id, name and an RFC 3339 UTC createdAt with milliseconds', async () => {
    const tenant = await newTenant('Acme Inc');
    expect(tenant).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Acme Inc',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
  });

  it.each([[{}], [{ name: '' }], [{ name: 42 }], [[]]])(
    'when the body is %p, then 400 validation_error',
    async (body) => {
      const res = await auth.admin('/tenants', body);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        code: 'validation_error',
        message: expect.stringContaining('body'),
      });
    },
  );

  it('when the name holds U+0000, then 400 validation_error naming body.name', async () => {
    const res = await auth.admin('/tenants', { name: 'Ac\u0000me' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      code: 'validation_error',
      message: 'body.name: must not contain U+0000',
    });
  });

  it('when the name is over 256 characters only with its surrounding whitespace, then 400 validation_error (the length sent is the length the document states)', async () => {
    const res = await auth.admin('/tenants', { name: `${'a'.repeat(250)}${'\r'.repeat(10)}` });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      code: 'validation_error',
      message: expect.stringContaining('body.name'),
    });
  });

  it('when the name has whitespace around it within 256 characters, then it is stored trimmed', async () => {
    const res = await auth.admin('/tenants', { name: '  Acme Inc\r\n' });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ name: 'Acme Inc' });
  });

  it('when the admin token is missing or wrong, then 401 and nothing is created', async () => {
    // A name of its own: other tests (and the end-to-end suite, on the same database) create
    // Tenants meanwhile, so only this name's count says whether these requests made one.
    const name = `Sneaky ${randomUUID()}`;
    for (const authorization of [undefined, 'Bearer nope']) {
      const res = await fetch(`${auth.url}/admin/v1/tenants`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify({ name }),
      });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 'unauthenticated' });
    }
    const created = await auth.pool.query(
      'select count(*)::int as n from tenants where name = $1',
      [name],
    );
    expect(created.rows[0].n).toBe(0);
  });

  it('when the method is wrong, then 405 with Allow', async () => {
    const res = await fetch(`${auth.url}/admin/v1/tenants`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST, GET');
    expect(await res.json()).toMatchObject({ code: 'method_not_allowed' });
  });
});

describe('operator API: API keys', () => {
  it('when a secret key is created without scopes, then it holds events:write contacts:write and its secret is shown once', async () => {
    const tenant = await newTenant();
    const res = await auth.admin(`/tenants/${tenant.id}/api-keys`, {
      kind: 'secret',
      name: 'backend',
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const key = await res.json();
    expect(key).toEqual({
      clientId: expect.stringMatching(/^ck_[0-9A-Za-z]{22}$/),
      secret: expect.stringMatching(/^sk_[0-9A-Za-z]{43}$/),
      kind: 'secret',
      scopes: ['events:write', 'contacts:write'],
      createdAt: expect.stringMatching(/Z$/),
    });
  });

  it('when a secret key is stored, then only an argon2id hash with OWASP parameters is kept, never the secret', async () => {
    const tenant = await newTenant();
    const key = await (
      await auth.admin(`/tenants/${tenant.id}/api-keys`, { kind: 'secret' })
    ).json();
    const { rows } = await auth.pool.query('select * from api_keys where client_id = $1', [
      key.clientId,
    ]);
    expect(rows[0].secret_hash).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
    expect(JSON.stringify(rows[0])).not.toContain(key.secret);
  });

  it('when scopes are given, then the key holds exactly those', async () => {
    const tenant = await newTenant();
    const key = await (
      await auth.admin(`/tenants/${tenant.id}/api-keys`, {
        kind: 'secret',
        scopes: ['contacts:read', 'contacts:erase'],
      })
    ).json();
    expect(key.scopes).toEqual(['contacts:read', 'contacts:erase']);
  });

  it('when a publishable key is created, then it has a pk_ ClientID, no secret and only events:write', async () => {
    const tenant = await newTenant();
    const res = await auth.admin(`/tenants/${tenant.id}/api-keys`, { kind: 'publishable' });
    expect(res.status).toBe(201);
    const key = await res.json();
    expect(key).toEqual({
      clientId: expect.stringMatching(/^pk_[0-9A-Za-z]{22}$/),
      kind: 'publishable',
      scopes: ['events:write'],
      identifierLookup: false,
      allowedOrigins: [],
      createdAt: expect.any(String),
    });
  });

  it('when a publishable key is created with identifierLookup and allowed Origins, then the answer and its tokens carry them', async () => {
    const tenant = await newTenant();
    const res = await auth.admin(`/tenants/${tenant.id}/api-keys`, {
      kind: 'publishable',
      identifierLookup: true,
      allowedOrigins: ['https://shop.example.com', 'http://localhost:5173'],
    });
    expect(res.status).toBe(201);
    const key = await res.json();
    expect(key).toMatchObject({
      identifierLookup: true,
      allowedOrigins: ['https://shop.example.com', 'http://localhost:5173'],
    });
    const token = await fetch(`${auth.url}/v1/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${key.clientId}:`).toString('base64')}` },
    });
    const { accessToken } = await token.json<{ accessToken: string }>();
    const claims = JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString());
    expect(claims).toMatchObject({
      identifier_lookup: true,
      allowed_origins: ['https://shop.example.com', 'http://localhost:5173'],
    });
  });

  it('when a secret key is sent publishable-key rules, then they are ignored and the answer has none', async () => {
    const tenant = await newTenant();
    const res = await auth.admin(`/tenants/${tenant.id}/api-keys`, {
      kind: 'secret',
      identifierLookup: true,
      allowedOrigins: ['https://shop.example.com'],
    });
    expect(res.status).toBe(201);
    const key = await res.json<Record<string, unknown>>();
    expect(key).not.toHaveProperty('identifierLookup');
    expect(key).not.toHaveProperty('allowedOrigins');
  });

  it.each([
    [
      { kind: 'publishable', allowedOrigins: ['https://shop.example.com/'] },
      'body.allowedOrigins[0]',
    ],
    [
      { kind: 'publishable', allowedOrigins: ['https://Shop.example.com'] },
      'body.allowedOrigins[0]',
    ],
    [{ kind: 'publishable', allowedOrigins: ['ftp://shop.example.com'] }, 'body.allowedOrigins[0]'],
    [{ kind: 'publishable', allowedOrigins: ['*'] }, 'body.allowedOrigins[0]'],
    [{ kind: 'publishable', identifierLookup: 'yes' }, 'body.identifierLookup'],
  ])('when the key rules are %p, then 400 naming %s', async (body, field) => {
    const tenant = await newTenant();
    const res = await auth.admin(`/tenants/${tenant.id}/api-keys`, body);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      code: 'validation_error',
      message: expect.stringContaining(field),
    });
  });

  it.each([
    [{ kind: 'admin' }],
    [{ kind: 'secret', scopes: ['contacts:everything'] }],
    [{ kind: 'secret', scopes: [] }],
    [{ kind: 'publishable', scopes: ['contacts:read'] }],
  ])('when the body is %p, then 400 validation_error', async (body) => {
    const tenant = await newTenant();
    const res = await auth.admin(`/tenants/${tenant.id}/api-keys`, body);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'validation_error' });
  });

  it.each([['00000000-0000-4000-8000-000000000000'], ['not-a-uuid']])(
    'when the tenant %s does not exist, then 404',
    async (tenantId) => {
      const res = await auth.admin(`/tenants/${tenantId}/api-keys`, { kind: 'secret' });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ code: 'not_found' });
    },
  );

  it('when a key is revoked, then 204, again 204, and another tenant cannot revoke it', async () => {
    const tenant = await newTenant();
    const other = await newTenant();
    const key = await (
      await auth.admin(`/tenants/${tenant.id}/api-keys`, { kind: 'secret' })
    ).json();
    expect((await auth.admin(`/tenants/${other.id}/api-keys/${key.clientId}/revoke`)).status).toBe(
      404,
    );
    expect((await auth.admin(`/tenants/${tenant.id}/api-keys/${key.clientId}/revoke`)).status).toBe(
      204,
    );
    expect((await auth.admin(`/tenants/${tenant.id}/api-keys/${key.clientId}/revoke`)).status).toBe(
      204,
    );
    expect((await auth.admin(`/tenants/${tenant.id}/api-keys/ck_unknown/revoke`)).status).toBe(404);
  });

  it('when the key name holds U+0000, then 400 validation_error naming body.name and no key', async () => {
    const tenant = await newTenant();
    const res = await auth.admin(`/tenants/${tenant.id}/api-keys`, {
      kind: 'secret',
      name: 'back\u0000end',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      code: 'validation_error',
      message: 'body.name: must not contain U+0000',
    });
    const { rows } = await auth.pool.query('select 1 from api_keys where tenant_id = $1', [
      tenant.id,
    ]);
    expect(rows).toEqual([]);
  });

  it.each([
    ['U+0000', (id: string) => `${id}%00`],
    ['a control character', (id: string) => `${id.slice(0, -1)}%01`],
    ['too many characters', (id: string) => `${id}${'0'.repeat(1000)}`],
  ])(
    'when the revoked ClientID holds %s, then 404 and the key stays live',
    async (_what, malformed) => {
      const tenant = await newTenant();
      const key = await (
        await auth.admin(`/tenants/${tenant.id}/api-keys`, { kind: 'secret' })
      ).json();

      const res = await auth.admin(
        `/tenants/${tenant.id}/api-keys/${malformed(key.clientId)}/revoke`,
      );

      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({
        code: 'not_found',
        message: 'no such API key in this tenant',
      });
      const { rows } = await auth.pool.query(
        'select revoked_at from api_keys where client_id = $1',
        [key.clientId],
      );
      expect(rows).toEqual([{ revoked_at: null }]);
    },
  );
});

describe('internal tenant lookup', () => {
  const lookup = (tenantId: string, token = SERVICE_TOKEN) =>
    fetch(`${auth.url}/internal/v1/tenants/${tenantId}`, {
      headers: { authorization: `Bearer ${token}` },
    });

  it('when a service asks for an existing tenant, then 200; for an unknown or malformed one, then 404', async () => {
    const tenant = await newTenant('Internal');
    expect((await lookup(tenant.id)).status).toBe(200);
    expect((await lookup('00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await lookup('nope')).status).toBe(404);
  });

  it('when the caller presents the admin token instead of the service token, then 401', async () => {
    const tenant = await newTenant('Internal');
    expect((await lookup(tenant.id, ADMIN_TOKEN)).status).toBe(401);
  });
});

describe('internal revocation list', () => {
  const revoked = async (token = SERVICE_TOKEN) => {
    const res = await fetch(`${auth.url}/internal/v1/revoked-keys`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return {
      status: res.status,
      body: res.status === 200 ? await res.json<{ clientIds: string[] }>() : null,
    };
  };

  it('when a key is revoked, then the list has it until its tokens have all expired; live keys are never listed', async () => {
    const tenant = await newTenant('Revocations');
    const live = await (
      await auth.admin(`/tenants/${tenant.id}/api-keys`, { kind: 'secret' })
    ).json<{ clientId: string }>();
    const gone = await (
      await auth.admin(`/tenants/${tenant.id}/api-keys`, { kind: 'secret' })
    ).json<{ clientId: string }>();
    const old = await (
      await auth.admin(`/tenants/${tenant.id}/api-keys`, { kind: 'secret' })
    ).json<{ clientId: string }>();
    await auth.admin(`/tenants/${tenant.id}/api-keys/${gone.clientId}/revoke`);
    await auth.admin(`/tenants/${tenant.id}/api-keys/${old.clientId}/revoke`);
    // Revoked 17 minutes ago: every token issued for it has expired (900 s + a minute).
    await auth.pool.query(
      `update api_keys set revoked_at = now() - interval '17 minutes' where client_id = $1`,
      [old.clientId],
    );

    const { status, body } = await revoked();
    expect(status).toBe(200);
    expect(body!.clientIds).toContain(gone.clientId);
    expect(body!.clientIds).not.toContain(old.clientId);
    expect(body!.clientIds).not.toContain(live.clientId);
  });

  it('when the caller has no service token, then 401', async () => {
    expect((await revoked(ADMIN_TOKEN)).status).toBe(401);
  });
});
