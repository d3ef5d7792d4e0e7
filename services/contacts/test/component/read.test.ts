// GET /v1/contacts/{externalId} and GET /v1/contacts/by-id/{id}: the Contact, or 404.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startContactsService, uniqueEmail, type TestContactsService } from '../support.js';

let svc: TestContactsService;
beforeAll(async () => {
  svc = await startContactsService();
});
afterAll(() => svc.close());

const put = async (token: string, externalId: string, body: unknown) => {
  const res = await svc.request('PUT', `/v1/contacts/${encodeURIComponent(externalId)}`, {
    token,
    body,
  });
  expect(res.status).toBe(201);
  return res.json();
};
const post = async (token: string, body: unknown) => {
  const res = await svc.request('POST', '/v1/contacts', { token, body });
  expect(res.status).toBe(201);
  return res.json();
};
const get = (token: string, route: string) => svc.request('GET', route, { token });

async function expectNotFound(res: Response) {
  expect(res.status).toBe(404);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(await res.json()).toStrictEqual({ code: 'not_found', message: expect.any(String) });
}

describe('GET /v1/contacts/{externalId}', () => {
  it('when the Contact exists, then 200 with the Contact object as the upsert returned it', async () => {
    const { token } = svc.newTenant();
    const contact = await put(token, 'user-1', {
      email: uniqueEmail(),
      name: 'Ada',
      phone: '+4915112345678',
      timeZone: 'Europe/Berlin',
    });

    const res = await get(token, '/v1/contacts/user-1');

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toStrictEqual(contact);
  });

  it('when no Contact has the externalId, then 404 not_found', async () => {
    const { token } = svc.newTenant();

    await expectNotFound(await get(token, '/v1/contacts/nobody'));
  });

  it('when the externalId is matched, then exactly (case-sensitively)', async () => {
    const { token } = svc.newTenant();
    await put(token, 'User-1', { email: uniqueEmail() });

    await expectNotFound(await get(token, '/v1/contacts/user-1'));
  });

  it('when the externalId names an email-only Contact by its email, then 404 (email is not an externalId)', async () => {
    const { token } = svc.newTenant();
    const email = uniqueEmail();
    await post(token, { email });

    await expectNotFound(await get(token, `/v1/contacts/${encodeURIComponent(email)}`));
  });

  it.each([
    ['U+0000', 'a%00b'],
    ['a control character', 'a%0Ab'],
    ['256 characters', 'x'.repeat(256)],
  ])(
    'when the externalId has %s (no Contact can have it), then 404, not 400 or 500',
    async (_, encoded) => {
      const { token } = svc.newTenant();

      await expectNotFound(await get(token, `/v1/contacts/${encoded}`));
    },
  );

  it('when another tenant has a Contact with that externalId, then this tenant gets 404', async () => {
    const a = svc.newTenant();
    const b = svc.newTenant();
    await put(a.token, 'only-in-a', { email: uniqueEmail() });

    await expectNotFound(await get(b.token, '/v1/contacts/only-in-a'));
  });
});

describe('GET /v1/contacts/by-id/{id}', () => {
  it('when the Contact was created by email alone, then 200 with it (no externalId key)', async () => {
    const { token } = svc.newTenant();
    const contact = await post(token, { email: uniqueEmail(), name: 'Only email' });

    const res = await get(token, `/v1/contacts/by-id/${contact.id}`);

    expect(res.status).toBe(200);
    const read = await res.json();
    expect(read).toStrictEqual(contact);
    expect(read).not.toHaveProperty('externalId');
  });

  it('when the Contact has an externalId, then 200 with it', async () => {
    const { token } = svc.newTenant();
    const contact = await put(token, 'user-1', { email: uniqueEmail() });

    const res = await get(token, `/v1/contacts/by-id/${contact.id}`);

    expect(res.status).toBe(200);
    expect(await res.json()).toStrictEqual(contact);
  });

  it('when the id is written in upper case, then it names the same Contact', async () => {
    const { token } = svc.newTenant();
    const contact = await put(token, 'user-1', { email: uniqueEmail() });

    const res = await get(token, `/v1/contacts/by-id/${String(contact.id).toUpperCase()}`);

    expect(res.status).toBe(200);
    expect(await res.json()).toStrictEqual(contact);
  });

  it('when no Contact has the id, then 404 not_found', async () => {
    const { token } = svc.newTenant();

    await expectNotFound(await get(token, `/v1/contacts/by-id/${randomUUID()}`));
  });

  it.each([
    ['not a uuid', 'not-a-uuid'],
    ['a number', '123'],
    ['a uuid without dashes', randomUUID().replaceAll('-', '')],
    ['a uuid with a trailing character', `${randomUUID()}x`],
    ['a uuid in braces', `%7B${randomUUID()}%7D`],
    ['U+0000', 'a%00b'],
  ])('when the id is %s, then 404 not_found, not 400 or 500', async (_, id) => {
    const { token } = svc.newTenant();

    await expectNotFound(await get(token, `/v1/contacts/by-id/${id}`));
  });

  it("when the id is another tenant's Contact, then 404 not_found", async () => {
    const a = svc.newTenant();
    const b = svc.newTenant();
    const contact = await put(a.token, 'user-1', { email: uniqueEmail() });

    await expectNotFound(await get(b.token, `/v1/contacts/by-id/${contact.id}`));
  });

  it('when the route is by-id without an id, then it is read as the externalId "by-id"', async () => {
    const { token } = svc.newTenant();
    const contact = await put(token, 'by-id', { email: uniqueEmail() });

    const res = await get(token, '/v1/contacts/by-id');

    expect(res.status).toBe(200);
    expect(await res.json()).toStrictEqual(contact);
  });
});

describe('access', () => {
  const routes = () => ['/v1/contacts/user-1', `/v1/contacts/by-id/${randomUUID()}`];

  it('when the key lacks contacts:read, then 403 insufficient_scope "missing scope contacts:read" on both reads', async () => {
    const { tenantId, token: writer } = svc.newTenant();
    const contact = await put(writer, 'user-1', { email: uniqueEmail() });
    const token = svc.tokenFor(tenantId, ['contacts:write', 'events:write']);

    for (const route of ['/v1/contacts/user-1', `/v1/contacts/by-id/${contact.id}`]) {
      const res = await get(token, route);

      expect(res.status).toBe(403);
      expect(await res.json()).toStrictEqual({
        code: 'insufficient_scope',
        message: 'missing scope contacts:read',
      });
    }
  });

  it('when the key holds only contacts:read, then both reads answer', async () => {
    const { tenantId, token: writer } = svc.newTenant();
    const contact = await put(writer, 'user-1', { email: uniqueEmail() });
    const reader = svc.tokenFor(tenantId, ['contacts:read']);

    expect((await get(reader, '/v1/contacts/user-1')).status).toBe(200);
    expect((await get(reader, `/v1/contacts/by-id/${contact.id}`)).status).toBe(200);
  });

  it.each([
    ['no Authorization header', undefined],
    ['a Basic header', 'Basic Y2tfeDpza195'],
    ['a malformed token', 'Bearer not.a.jwt!'],
    ['a token that is not a JWT', 'Bearer abc'],
  ])('when the request has %s, then 401 unauthenticated', async (_, authorization) => {
    for (const route of routes()) {
      const res = await fetch(`${svc.url}${route}`, {
        headers: authorization ? { authorization } : {},
      });

      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
      expect(await res.json()).toStrictEqual({
        code: 'unauthenticated',
        message: expect.any(String),
      });
    }
  });

  it('when the token is expired, signed by another key, from another issuer or for another audience, then 401 unauthenticated', async () => {
    const { tenantId } = svc.newTenant();
    const other = await startContactsService();
    try {
      const tokens = [
        svc.tokenFor(tenantId, ['contacts:read'], { expiresIn: -60 }),
        svc.tokenFor(tenantId, ['contacts:read'], { issuer: 'not-herald' }),
        svc.tokenFor(tenantId, ['contacts:read'], { audience: 'not-herald-api' }),
        other.tokenFor(tenantId, ['contacts:read']), // another signing key
      ];
      for (const token of tokens) {
        for (const route of routes()) {
          const res = await get(token, route);

          expect(res.status).toBe(401);
          expect(await res.json()).toMatchObject({ code: 'unauthenticated' });
        }
      }
    } finally {
      await other.close();
    }
  });

  it.each([
    ['DELETE', '/v1/contacts/by-id/00000000-0000-4000-8000-000000000000', 'GET'],
    ['PUT', '/v1/contacts/by-id/00000000-0000-4000-8000-000000000000', 'GET'],
    ['POST', '/v1/contacts/by-id/00000000-0000-4000-8000-000000000000', 'GET'],
    ['DELETE', '/v1/contacts/user-1', 'GET, PUT'],
  ])('when the method is %s on %s, then 405 with Allow %s', async (method, route, allow) => {
    const { token } = svc.newTenant();

    const res = await svc.request(method, route, { token });

    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe(allow);
    expect(await res.json()).toMatchObject({ code: 'method_not_allowed' });
  });

  it('when any answer is sent, then it carries an X-Request-Id, echoed when the caller sent one', async () => {
    const { token } = svc.newTenant();

    const generated = await get(token, '/v1/contacts/nobody');
    const echoed = await svc.request('GET', '/v1/contacts/nobody', {
      token,
      headers: { 'x-request-id': 'req-contacts-read-1' },
    });

    expect(generated.headers.get('x-request-id')).toBeTruthy();
    expect(echoed.headers.get('x-request-id')).toBe('req-contacts-read-1');
  });
});
