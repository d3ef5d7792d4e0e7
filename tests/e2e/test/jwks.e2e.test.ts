import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import {
  DEFAULT_AUDIENCE,
  DEFAULT_ISSUER,
  createTokenVerifier,
  assertScope,
  authenticate,
  principalOf,
} from '@herald/auth';
import { createHttpApp, startServer, type RunningServer } from '@herald/http';
import { basic, exchange, newKey, newTenant } from './support.js';

// A stand-in "second service": the shared libs only, verifying tokens from the running auth
// service's published keys, as contacts and events will.
const jwksUrl = process.env.AUTH_JWKS_URL ?? 'http://127.0.0.1:18081/.well-known/jwks.json';
let second: RunningServer;

beforeAll(async () => {
  const verifier = createTokenVerifier({
    jwksUrl,
    issuer: DEFAULT_ISSUER,
    audience: DEFAULT_AUDIENCE,
  });
  const app = createHttpApp({
    logger: pino({ level: 'silent' }),
    routes: (app) => {
      app.get('/v1/whoami', async (req, res) => {
        assertScope(await authenticate(req, res, verifier), 'contacts:read');
        const p = principalOf(res);
        res.json({ tenantId: p.tenantId, clientId: p.clientId });
      });
    },
  });
  second = await startServer(app, {
    host: '127.0.0.1',
    port: 0,
    logger: pino({ level: 'silent' }),
  });
});
afterAll(() => second.close());

async function tokenFor(scopes: string[]) {
  const tenantId = await newTenant('JWKS E2E');
  const key = await newKey(tenantId, { kind: 'secret', scopes });
  const { accessToken } = await (await exchange(basic(key.clientId, key.secret!))).json();
  return { tenantId, clientId: key.clientId, accessToken: accessToken as string };
}

const whoami = (authorization?: string) =>
  fetch(`${second.url}/v1/whoami`, { headers: authorization ? { authorization } : {} });

describe('a second service verifying tokens from the JWKS', () => {
  it('when the token holds the scope, then the second service sees the tenant and ClientID', async () => {
    const t = await tokenFor(['contacts:read']);
    const res = await whoami(`Bearer ${t.accessToken}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ tenantId: t.tenantId, clientId: t.clientId });
  });

  it('when the scope is missing, then 403 insufficient_scope naming it', async () => {
    const t = await tokenFor(['events:write']);
    const res = await whoami(`Bearer ${t.accessToken}`);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      code: 'insufficient_scope',
      message: 'missing scope contacts:read',
    });
  });

  it('when the token is tampered with, missing or malformed, then 401 unauthenticated', async () => {
    const t = await tokenFor(['contacts:read']);
    const [h, p, s] = t.accessToken.split('.');
    const forgedPayload = Buffer.from(
      JSON.stringify({
        ...JSON.parse(Buffer.from(p!, 'base64url').toString()),
        tid: '00000000-0000-4000-8000-000000000000',
      }),
    ).toString('base64url');
    for (const header of [
      `Bearer ${h}.${forgedPayload}.${s}`,
      undefined,
      'Bearer abc',
      `Basic ${t.accessToken}`,
    ]) {
      const res = await whoami(header);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 'unauthenticated' });
    }
  });
});
