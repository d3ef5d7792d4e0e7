import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { createTokenVerifier } from '@herald/auth';
import {
  AUDIENCE,
  ISSUER,
  basic,
  newSigningJwk,
  startAuthService,
  type TestAuthService,
} from '../support.js';

let auth: TestAuthService;
let tenantId: string;
let secretKey: { clientId: string; secret: string };
let publishableKey: { clientId: string };

beforeAll(async () => {
  auth = await startAuthService();
  tenantId = (await (await auth.admin('/tenants', { name: 'Token Co' })).json()).id;
  secretKey = await (await auth.admin(`/tenants/${tenantId}/api-keys`, { kind: 'secret' })).json();
  publishableKey = await (
    await auth.admin(`/tenants/${tenantId}/api-keys`, { kind: 'publishable' })
  ).json();
});
afterAll(() => auth.close());

const exchange = (authorization?: string) =>
  fetch(`${auth.url}/v1/token`, {
    method: 'POST',
    headers: authorization ? { authorization } : {},
  });

async function expectInvalidClient(res: Response) {
  expect(res.status).toBe(401);
  expect(await res.json()).toEqual({ code: 'invalid_client', message: expect.any(String) });
  expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm="herald"/);
}

describe('POST /v1/token', () => {
  it('when a secret key exchanges, then 200 with a Bearer token of 900 s that is not cached', async () => {
    const res = await exchange(basic(secretKey.clientId, secretKey.secret));
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = await res.json();
    expect(body).toEqual({ accessToken: expect.any(String), tokenType: 'Bearer', expiresIn: 900 });
  });

  it("when the token is decoded, then it is ES256 with kid, iss, aud, exp = iat + 900 and the key's tenant, ClientID and scopes", async () => {
    const { accessToken } = await (
      await exchange(basic(secretKey.clientId, secretKey.secret))
    ).json();
    const header = decodeProtectedHeader(accessToken);
    expect(header).toMatchObject({ alg: 'ES256', kid: auth.signer.jwks.keys[0]!.kid });
    const { payload } = await jwtVerify(accessToken, createLocalJWKSet(auth.signer.jwks), {
      issuer: ISSUER,
      audience: AUDIENCE,
    });
    expect(payload.exp! - payload.iat!).toBe(900);
    expect(payload).toMatchObject({
      tid: tenantId,
      client_id: secretKey.clientId,
      sub: secretKey.clientId,
      scope: 'events:write contacts:write',
    });
  });

  it('when another service verifies the token from the published JWKS, then it gets the principal', async () => {
    const { accessToken } = await (
      await exchange(basic(secretKey.clientId, secretKey.secret))
    ).json();
    const verifier = createTokenVerifier({
      jwksUrl: `${auth.url}/.well-known/jwks.json`,
      issuer: ISSUER,
      audience: AUDIENCE,
    });
    const principal = await verifier.verify(accessToken);
    expect(principal.tenantId).toBe(tenantId);
    expect([...principal.scopes].sort()).toEqual(['contacts:write', 'events:write']);
  });

  it('when a publishable key exchanges with an empty password, then its token holds only events:write', async () => {
    const res = await exchange(basic(publishableKey.clientId, ''));
    expect(res.status).toBe(200);
    const { accessToken } = await res.json();
    const { payload } = await jwtVerify(accessToken, createLocalJWKSet(auth.signer.jwks));
    expect(payload.scope).toBe('events:write');
  });

  it('when a publishable key sends a password, then 401 invalid_client', async () => {
    await expectInvalidClient(await exchange(basic(publishableKey.clientId, 'anything')));
  });

  it.each([
    ['a wrong secret', () => basic(secretKey.clientId, `${secretKey.secret}x`)],
    ['an empty secret', () => basic(secretKey.clientId, '')],
    ['an unknown ClientID', () => basic('ck_doesnotexist00000000', secretKey.secret)],
    ['no Authorization header', () => undefined],
    ['a Bearer header', () => 'Bearer abc'],
    ['unparseable Basic credentials', () => 'Basic !!!not-base64'],
    [
      'Basic credentials without a colon',
      () => `Basic ${Buffer.from('justaclientid').toString('base64')}`,
    ],
  ])(
    'when the request has %s, then 401 invalid_client with WWW-Authenticate',
    async (_name, header) => {
      await expectInvalidClient(await exchange(header()));
    },
  );

  it('when the ClientID is unknown, then the slow hash still runs once, as for a wrong secret', async () => {
    const before = auth.hasher.verifications;
    await exchange(basic('ck_doesnotexist00000000', 'sk_whatever'));
    expect(auth.hasher.verifications - before).toBe(1);
    await exchange(basic(secretKey.clientId, 'sk_wrong'));
    expect(auth.hasher.verifications - before).toBe(2);
    await exchange(undefined);
    expect(auth.hasher.verifications - before).toBe(3);
  });

  it.each([
    ['U+0000', `ck_${'0'.repeat(10)}\u0000${'0'.repeat(11)}`],
    ['a control character', `ck_${'0'.repeat(10)}\u0001${'0'.repeat(11)}`],
    ['10,000 characters', `ck_${'0'.repeat(9_997)}`],
    ['a valid ClientID followed by U+0000', () => `${secretKey.clientId}\u0000`],
  ])(
    'when the ClientID holds %s (no ClientID of ours), then 401 invalid_client after the slow hash, as for an unknown one',
    async (_name, clientId) => {
      const before = auth.hasher.verifications;
      const id = typeof clientId === 'function' ? clientId() : clientId;
      await expectInvalidClient(await exchange(basic(id, secretKey.secret)));
      expect(auth.hasher.verifications - before).toBe(1);
    },
  );

  it('when the key is revoked, then its correct secret answers 401 invalid_client', async () => {
    const key = await (
      await auth.admin(`/tenants/${tenantId}/api-keys`, { kind: 'secret' })
    ).json();
    expect((await exchange(basic(key.clientId, key.secret))).status).toBe(200);
    expect((await auth.admin(`/tenants/${tenantId}/api-keys/${key.clientId}/revoke`)).status).toBe(
      204,
    );
    await expectInvalidClient(await exchange(basic(key.clientId, key.secret)));
  });

  it('when a browser preflights the exchange, then CORS allows Authorization from any origin', async () => {
    const res = await fetch(`${auth.url}/v1/token`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://shop.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    const failed = await exchange(undefined);
    expect(failed.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('when the method is not POST, then 405 method_not_allowed', async () => {
    const res = await fetch(`${auth.url}/v1/token`);
    expect(res.status).toBe(405);
    expect(await res.json()).toMatchObject({ code: 'method_not_allowed' });
  });
});

describe('signing key rotation', () => {
  it('when a new key is put first, then it signs, and tokens of the old key still verify', async () => {
    const oldKey = newSigningJwk('old');
    const newKey = newSigningJwk('new');
    const before = await startAuthService({ signingKeys: [oldKey] });
    const after = await startAuthService({ signingKeys: [newKey, oldKey] });
    try {
      const t = await (await before.admin('/tenants', { name: 'Rotate' })).json();
      const key = await (
        await before.admin(`/tenants/${t.id}/api-keys`, { kind: 'secret' })
      ).json();
      const oldToken = (
        await (
          await fetch(`${before.url}/v1/token`, {
            method: 'POST',
            headers: { authorization: basic(key.clientId, key.secret) },
          })
        ).json()
      ).accessToken;
      const newToken = (
        await (
          await fetch(`${after.url}/v1/token`, {
            method: 'POST',
            headers: { authorization: basic(key.clientId, key.secret) },
          })
        ).json()
      ).accessToken;
      expect(decodeProtectedHeader(oldToken).kid).toBe('old');
      expect(decodeProtectedHeader(newToken).kid).toBe('new');
      const verifier = createTokenVerifier({
        jwksUrl: `${after.url}/.well-known/jwks.json`,
        issuer: ISSUER,
        audience: AUDIENCE,
      });
      await expect(verifier.verify(oldToken)).resolves.toMatchObject({ tenantId: t.id });
      await expect(verifier.verify(newToken)).resolves.toMatchObject({ tenantId: t.id });
      const jwks = await (
        await fetch(`${after.url}/.well-known/jwks.json`)
      ).json<{ keys: Array<{ kid: string }> }>();
      expect(jwks.keys.map((k) => k.kid)).toEqual(['new', 'old']);
      expect(JSON.stringify(jwks)).not.toMatch(/"d"/);
    } finally {
      await before.close();
      await after.close();
    }
  });
});
