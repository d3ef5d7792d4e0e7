import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import express from 'express';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  SignJWT,
  type CryptoKey,
  type JWK,
  type JWTVerifyGetKey,
} from 'jose';
import { errorHandler } from '@herald/errors';
import {
  assertIdentifierLookup,
  assertOriginAllowed,
  assertScope,
  authenticate,
  createTokenVerifier,
  principalOf,
  CLAIMS,
} from '../src/index.js';

const ISSUER = 'herald-auth';
const AUDIENCE = 'herald-api';
const TENANT = '0b5e7d2c-1f4e-4c6b-9a51-3a0f0e2d9c11';

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

async function makeKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return {
    kid,
    privateKey,
    jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' },
  };
}

let published: SigningKey[] = [];
let jwksFetches = 0;
let jwksServer: Server;
let jwksUrl: string;

beforeAll(async () => {
  published = [await makeKey('k1')];
  jwksServer = createServer((_req, res) => {
    jwksFetches += 1;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: published.map((k) => k.jwk) }));
  });
  await new Promise<void>((r) => jwksServer.listen(0, '127.0.0.1', r));
  jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/.well-known/jwks.json`;
});
afterAll(() => {
  jwksServer.close();
});

function sign(
  key: SigningKey,
  overrides: {
    iss?: string;
    aud?: string;
    exp?: number;
    scope?: string;
    clientId?: string;
    claims?: Record<string, unknown>;
  } = {},
) {
  const now = Math.floor(Date.now() / 1000);
  const clientId = overrides.clientId ?? 'ck_test';
  return new SignJWT({
    [CLAIMS.tenantId]: TENANT,
    [CLAIMS.clientId]: clientId,
    [CLAIMS.scope]: overrides.scope ?? 'events:write',
    ...overrides.claims,
  })
    .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'at+jwt' })
    .setIssuer(overrides.iss ?? ISSUER)
    .setAudience(overrides.aud ?? AUDIENCE)
    .setSubject(clientId)
    .setJti(crypto.randomUUID())
    .setIssuedAt(now)
    .setExpirationTime(overrides.exp ?? now + 900)
    .sign(key.privateKey);
}

const verifier = () => createTokenVerifier({ jwksUrl, issuer: ISSUER, audience: AUDIENCE });

describe('createTokenVerifier', () => {
  it('when a token is valid, then its principal comes back and the JWKS is fetched once for many calls', async () => {
    const v = verifier();
    const before = jwksFetches;
    const token = await sign(published[0]!, { scope: 'events:write contacts:read' });
    for (let i = 0; i < 20; i += 1) {
      const principal = await v.verify(token);
      expect(principal.tenantId).toBe(TENANT);
      expect(principal.clientId).toBe('ck_test');
      expect([...principal.scopes]).toEqual(['events:write', 'contacts:read']);
    }
    expect(jwksFetches - before).toBe(1);
  });

  it.each([
    ['expired', { exp: Math.floor(Date.now() / 1000) - 60 }],
    ['from another issuer', { iss: 'someone-else' }],
    ['for another audience', { aud: 'other-api' }],
  ])('when a token is %s, then 401 unauthenticated', async (_name, overrides) => {
    const token = await sign(published[0]!, overrides);
    await expect(verifier().verify(token)).rejects.toMatchObject({
      status: 401,
      code: 'unauthenticated',
    });
  });

  it('when a token is signed by a key that is not published, then 401', async () => {
    const forger = await makeKey('k1');
    await expect(verifier().verify(await sign(forger))).rejects.toMatchObject({ status: 401 });
  });

  it('when a token uses a symmetric algorithm, then 401 (algorithm pinned)', async () => {
    const hs = await new SignJWT({
      [CLAIMS.tenantId]: TENANT,
      [CLAIMS.clientId]: 'x',
      [CLAIMS.scope]: 'events:write',
    })
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setJti('j')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode('a-shared-secret-a-shared-secret!'));
    await expect(verifier().verify(hs)).rejects.toMatchObject({ status: 401 });
  });

  it('when a JWT is not typed as an access token, then 401', async () => {
    const now = Math.floor(Date.now() / 1000);
    const idToken = await new SignJWT({
      [CLAIMS.tenantId]: TENANT,
      [CLAIMS.clientId]: 'x',
      [CLAIMS.scope]: 'events:write',
    })
      .setProtectedHeader({ alg: 'ES256', kid: published[0]!.kid, typ: 'JWT' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setJti('j')
      .setIssuedAt(now)
      .setExpirationTime(now + 900)
      .sign(published[0]!.privateKey);
    await expect(verifier().verify(idToken)).rejects.toMatchObject({ status: 401 });
  });

  it('when the cached keys are stale and the JWKS is down, then the last good keys still verify', async () => {
    const key = await makeKey('fallback');
    const server = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [key.jwk] }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
    const v = createTokenVerifier({
      jwksUrl: url,
      issuer: ISSUER,
      audience: AUDIENCE,
      jwksCacheMaxAgeMs: 50,
    });
    const token = await sign(key);
    await v.verify(token);
    await new Promise((r) => server.close(r));
    await new Promise((r) => setTimeout(r, 100));
    await expect(v.verify(token)).resolves.toMatchObject({ tenantId: TENANT });
  });

  it('when garbage is presented, then 401', async () => {
    await expect(verifier().verify('a.b.c')).rejects.toMatchObject({ status: 401 });
  });

  it('when the signing key is rotated, then tokens with the new kid verify after one refetch and old ones still verify', async () => {
    const v = verifier();
    const oldToken = await sign(published[0]!);
    await v.verify(oldToken);
    const rotated = await makeKey('k2');
    published = [rotated, published[0]!];
    await new Promise((r) => setTimeout(r, 5_100)); // the refetch cooldown
    await expect(v.verify(await sign(rotated))).resolves.toMatchObject({ tenantId: TENANT });
    await expect(v.verify(oldToken)).resolves.toMatchObject({ tenantId: TENANT });
    // A token of the old key that was never verified (so not cached) meets the refetched keys.
    await expect(v.verify(await sign(published[1]!))).resolves.toMatchObject({ tenantId: TENANT });
  });

  it('when the JWKS cannot be reached, then 503 service_unavailable, not 401', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const { port } = closed.address() as AddressInfo;
    await new Promise((r) => closed.close(r));
    const v = createTokenVerifier({
      jwksUrl: `http://127.0.0.1:${port}/jwks.json`,
      issuer: ISSUER,
      audience: AUDIENCE,
    });
    await expect(v.verify(await sign(published[0]!))).rejects.toMatchObject({
      status: 503,
      code: 'service_unavailable',
    });
  });
});

describe('createTokenVerifier with a revocation list', () => {
  it('when the key of a validly signed token is revoked, then it is 401 unauthenticated', async () => {
    const token = await sign(published[0]!);
    const revoked = createTokenVerifier({
      jwksUrl,
      issuer: ISSUER,
      audience: AUDIENCE,
      revocations: { isRevoked: (clientId) => clientId === 'ck_test' },
    });
    await expect(verifier().verify(token)).resolves.toMatchObject({ clientId: 'ck_test' });
    await expect(revoked.verify(token)).rejects.toMatchObject({
      status: 401,
      code: 'unauthenticated',
      message: 'the API key of this access token was revoked',
    });
  });
});

describe('the rules of a publishable key', () => {
  const publishable = (claims?: Record<string, unknown>) =>
    sign(published[0]!, { clientId: 'pk_test', ...(claims ? { claims } : {}) });

  it('when a secret key presents a token, then it has no publishable rules and may look identifiers up', async () => {
    const principal = await verifier().verify(await sign(published[0]!));
    expect(principal.publishable).toBeNull();
    expect(() => assertIdentifierLookup(principal)).not.toThrow();
    expect(() => assertOriginAllowed(principal, undefined)).not.toThrow();
  });

  it('when a pk_ token carries no rule claims (as before the rules existed), then it gets the strictest: no lookups, any Origin', async () => {
    const principal = await verifier().verify(await publishable());
    expect(principal.publishable).toEqual({ identifierLookup: false, allowedOrigins: [] });
    expect(() => assertIdentifierLookup(principal)).toThrow(
      expect.objectContaining({ status: 403, code: 'forbidden' }),
    );
    expect(() => assertOriginAllowed(principal, 'https://anywhere.example')).not.toThrow();
  });

  it('when a pk_ token allows lookups and two Origins, then only those Origins pass, a missing one included', async () => {
    const principal = await verifier().verify(
      await publishable({
        [CLAIMS.identifierLookup]: true,
        [CLAIMS.allowedOrigins]: ['https://shop.example', 'http://localhost:5173'],
      }),
    );
    expect(() => assertIdentifierLookup(principal)).not.toThrow();
    expect(() => assertOriginAllowed(principal, 'https://shop.example')).not.toThrow();
    expect(() => assertOriginAllowed(principal, 'HTTPS://SHOP.EXAMPLE')).not.toThrow();
    for (const origin of ['https://evil.example', 'https://shop.example.evil', 'null', undefined]) {
      expect(() => assertOriginAllowed(principal, origin)).toThrow(
        expect.objectContaining({ status: 403, code: 'forbidden' }),
      );
    }
  });

  it.each([
    [{ [CLAIMS.identifierLookup]: 'yes' }],
    [{ [CLAIMS.allowedOrigins]: 'https://shop.example' }],
    [{ [CLAIMS.allowedOrigins]: [1] }],
  ])('when a pk_ token carries a rule claim of the wrong type (%p), then 401', async (claims) => {
    await expect(verifier().verify(await publishable(claims))).rejects.toMatchObject({
      status: 401,
    });
  });
});

describe('authenticate and assertScope', () => {
  async function call(authorization?: string) {
    const app = express();
    app.get('/contacts', async (req, res) => {
      assertScope(await authenticate(req, res, verifier()), 'contacts:read');
      res.json({ tenant: principalOf(res).tenantId });
    });
    app.use(errorHandler({ error: () => {}, warn: () => {} }));
    const server = app.listen(0);
    await new Promise((r) => server.once('listening', r));
    try {
      const res = await fetch(
        `http://127.0.0.1:${(server.address() as AddressInfo).port}/contacts`,
        {
          headers: authorization ? { authorization } : {},
        },
      );
      return {
        status: res.status,
        body: await res.json(),
        wwwAuthenticate: res.headers.get('www-authenticate'),
      };
    } finally {
      server.close();
    }
  }

  it('when the token holds the scope, then the route sees the principal', async () => {
    const res = await call(`Bearer ${await sign(published.at(-1)!, { scope: 'contacts:read' })}`);
    expect(res).toMatchObject({ status: 200, body: { tenant: TENANT } });
  });

  it('when the scope is missing, then 403 insufficient_scope naming it', async () => {
    const res = await call(`Bearer ${await sign(published.at(-1)!, { scope: 'events:write' })}`);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      code: 'insufficient_scope',
      message: 'missing scope contacts:read',
    });
  });

  it.each([[undefined], ['Basic abc'], ['Bearer not-a-jwt'], ['Bearer']])(
    'when Authorization is %p, then 401 unauthenticated with a Bearer challenge',
    async (header) => {
      const res = await call(header);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 'unauthenticated' });
      expect(res.wwwAuthenticate).toMatch(/^Bearer /);
    },
  );
});

describe('createTokenVerifier cache of verified tokens', () => {
  /** The published keys, counting how often jose asks for one: once per real verification. */
  function countingKeySet() {
    const local = createLocalJWKSet({ keys: published.map((k) => k.jwk) });
    const counter = {
      calls: 0,
      keySet: ((header, token) => {
        counter.calls += 1;
        return local(header, token);
      }) as JWTVerifyGetKey,
    };
    return counter;
  }

  it('when a token is verified twice, then jose verifies it once and the same principal comes back', async () => {
    const jose = countingKeySet();
    const v = createTokenVerifier({ jwksUrl, issuer: ISSUER, audience: AUDIENCE, ...jose });
    const token = await sign(published[0]!);
    const first = await v.verify(token);
    const second = await v.verify(token);
    expect(jose.calls).toBe(1);
    expect(second).toBe(first);
    expect(Object.isFrozen(second)).toBe(true);
  });

  it('when the key of a cached token is revoked, then the next verification refuses it', async () => {
    const revoked = new Set<string>();
    const jose = countingKeySet();
    const v = createTokenVerifier({
      jwksUrl,
      issuer: ISSUER,
      audience: AUDIENCE,
      revocations: { isRevoked: (clientId) => revoked.has(clientId) },
      ...jose,
    });
    const token = await sign(published[0]!);
    await expect(v.verify(token)).resolves.toMatchObject({ clientId: 'ck_test' });
    revoked.add('ck_test');
    await expect(v.verify(token)).rejects.toMatchObject({
      status: 401,
      code: 'unauthenticated',
      message: 'the API key of this access token was revoked',
    });
    expect(jose.calls).toBe(1);
  });

  it('when a cached token reaches its exp, then the cache no longer answers and jose decides with its clock tolerance', async () => {
    let now = Date.now();
    const exp = Math.floor(now / 1000) + 60;
    const jose = countingKeySet();
    const v = createTokenVerifier({
      jwksUrl,
      issuer: ISSUER,
      audience: AUDIENCE,
      clockToleranceSeconds: 5,
      now: () => now,
      ...jose,
    });
    const token = await sign(published[0]!, { exp });
    await v.verify(token);
    now = exp * 1000 - 1;
    await v.verify(token);
    expect(jose.calls).toBe(1);
    // At exp the entry is no longer used: jose verifies again (and, within its tolerance, accepts).
    now = exp * 1000;
    await expect(v.verify(token)).resolves.toMatchObject({ clientId: 'ck_test' });
    expect(jose.calls).toBe(2);
    now = (exp + 5) * 1000;
    await expect(v.verify(token)).rejects.toMatchObject({
      status: 401,
      code: 'unauthenticated',
      message: 'access token expired',
    });
    expect(jose.calls).toBe(3);
  });

  it('when a token fails verification, then it is not remembered: every attempt meets jose', async () => {
    const jose = countingKeySet();
    const v = createTokenVerifier({ jwksUrl, issuer: ISSUER, audience: AUDIENCE, ...jose });
    const forged = await sign(await makeKey(published[0]!.kid));
    for (let i = 0; i < 3; i += 1) {
      await expect(v.verify(forged)).rejects.toMatchObject({ status: 401 });
    }
    expect(jose.calls).toBe(3);
    // Revoked at its first verification: not cached as valid either.
    const revokedOnce = createTokenVerifier({
      jwksUrl,
      issuer: ISSUER,
      audience: AUDIENCE,
      revocations: { isRevoked: () => true },
      ...jose,
    });
    const token = await sign(published[0]!);
    await expect(revokedOnce.verify(token)).rejects.toMatchObject({ status: 401 });
    await expect(revokedOnce.verify(token)).rejects.toMatchObject({ status: 401 });
    expect(jose.calls).toBe(5);
  });

  it('when more tokens verify than the cache holds, then the least recently used is forgotten', async () => {
    const jose = countingKeySet();
    const v = createTokenVerifier({
      jwksUrl,
      issuer: ISSUER,
      audience: AUDIENCE,
      cacheSize: 2,
      ...jose,
    });
    const [a, b, c] = await Promise.all([1, 2, 3].map(() => sign(published[0]!)));
    await v.verify(a!);
    await v.verify(b!);
    await v.verify(a!); // a is now the most recently used
    expect(jose.calls).toBe(2);
    await v.verify(c!); // evicts b
    expect(jose.calls).toBe(3);
    await v.verify(a!);
    await v.verify(c!);
    expect(jose.calls).toBe(3);
    await v.verify(b!);
    expect(jose.calls).toBe(4);
  });

  it('when the cache is turned off, then every verification meets jose', async () => {
    const jose = countingKeySet();
    const v = createTokenVerifier({
      jwksUrl,
      issuer: ISSUER,
      audience: AUDIENCE,
      cacheSize: 0,
      ...jose,
    });
    const token = await sign(published[0]!);
    await v.verify(token);
    await v.verify(token);
    expect(jose.calls).toBe(2);
  });
});
