import { beforeAll, describe, expect, it } from '@jest/globals';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import {
  INGRESS,
  admin,
  basic,
  exchange,
  newKey,
  newTenant,
  stackSigningKeysKid,
} from './support.js';

let tenantId: string;
let key: { clientId: string; secret?: string };

beforeAll(async () => {
  tenantId = await newTenant('Token E2E');
  key = await newKey(tenantId);
});

async function expectInvalidClient(res: Response) {
  expect(res.status).toBe(401);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(await res.json()).toEqual({ code: 'invalid_client', message: expect.any(String) });
  expect(res.headers.get('www-authenticate')).toMatch(/^Basic /);
}

describe('POST /v1/token through the ingress', () => {
  it('when a secret key exchanges, then 200 {accessToken, tokenType: Bearer, expiresIn: 900}', async () => {
    const res = await exchange(basic(key.clientId, key.secret!));
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toEqual({ accessToken: expect.any(String), tokenType: 'Bearer', expiresIn: 900 });
    expect(decodeProtectedHeader(body.accessToken)).toMatchObject({
      alg: 'ES256',
      kid: stackSigningKeysKid(),
    });
    const claims = decodeJwt(body.accessToken);
    expect(claims).toMatchObject({
      tid: tenantId,
      client_id: key.clientId,
      scope: 'events:write contacts:write',
    });
    expect(claims.exp! - claims.iat!).toBe(900);
  });

  it('when a publishable key exchanges with an empty password, then its token can only write events', async () => {
    const publishable = await newKey(tenantId, { kind: 'publishable' });
    const res = await exchange(basic(publishable.clientId, ''));
    expect(res.status).toBe(200);
    expect(decodeJwt((await res.json()).accessToken).scope).toBe('events:write');
  });

  it('when a publishable key is sent with a password, then 401 invalid_client', async () => {
    const publishable = await newKey(tenantId, { kind: 'publishable' });
    await expectInvalidClient(await exchange(basic(publishable.clientId, 'not-empty')));
  });

  it.each([
    ['a wrong secret', () => basic(key.clientId, 'sk_wrong')],
    ['an empty secret for a secret key', () => basic(key.clientId, '')],
    ['an unknown ClientID', () => basic('ck_0000000000000000000000', 'sk_x')],
    ['no credentials', () => undefined],
    ['unparseable credentials', () => 'Basic %%%'],
  ])('when the exchange has %s, then 401 invalid_client', async (_case, header) => {
    await expectInvalidClient(await exchange(header()));
  });

  it('when a key is revoked, then it can no longer exchange', async () => {
    const doomed = await newKey(tenantId);
    expect((await exchange(basic(doomed.clientId, doomed.secret!))).status).toBe(200);
    expect(
      (await admin('POST', `/tenants/${tenantId}/api-keys/${doomed.clientId}/revoke`)).status,
    ).toBe(204);
    await expectInvalidClient(await exchange(basic(doomed.clientId, doomed.secret!)));
  });

  it('when a browser preflights the exchange, then the ingress answers with CORS for Authorization', async () => {
    const res = await fetch(`${INGRESS}/v1/token`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://shop.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    expect(res.headers.get('access-control-allow-headers')).toMatch(/Content-Type/);
    expect((await exchange(undefined)).headers.get('access-control-allow-origin')).toBe('*');
  });

  it('when the exchange is called with GET, then 405 method_not_allowed', async () => {
    const res = await fetch(`${INGRESS}/v1/token`);
    expect(res.status).toBe(405);
    expect(await res.json()).toMatchObject({ code: 'method_not_allowed' });
  });

  it('when the caller sends X-Request-Id, then the answer echoes it; otherwise one is assigned', async () => {
    const echoed = await exchange(undefined, { headers: { 'X-Request-Id': 'e2e-req-42' } });
    expect(echoed.headers.get('x-request-id')).toBe('e2e-req-42');
    const assigned = await exchange(undefined);
    expect(assigned.headers.get('x-request-id')).toMatch(/^[0-9a-zA-Z-]{16,}$/);
  });
});
