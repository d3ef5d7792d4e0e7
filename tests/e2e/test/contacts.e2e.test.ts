// The Contact routes (field rules, identity rules, errors) through the ingress, exactly as a customer
// calls them: create a key, exchange it for a token, then upsert and read.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { accessToken, call, expectError, INGRESS, newTenant } from './support.js';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const put = (token: string, encodedExternalId: string, body: unknown) =>
  call('PUT', `/v1/contacts/${encodedExternalId}`, token, body);
const post = (token: string, body: unknown) => call('POST', '/v1/contacts', token, body);
const get = (token: string, route: string) => call('GET', route, token);

const uniqueEmail = (label: string) => `${label}-${randomUUID().slice(0, 8)}@example.com`;

let tenantId: string;
/** contacts:read and contacts:write. */
let token: string;

beforeAll(async () => {
  tenantId = await newTenant('Contacts E2E');
  token = await accessToken(tenantId, ['contacts:read', 'contacts:write']);
});

describe('upserting and reading Contacts through the ingress', () => {
  it('when a Contact is PUT, then 201; PUT again 200 with the same id and nothing changed; GET by externalId and by id return it', async () => {
    const externalId = `user-${randomUUID()}`;
    const body = {
      email: uniqueEmail('ada'),
      name: 'Ada Lovelace',
      phone: '+4915112345678',
      timeZone: 'Europe/Berlin',
    };

    const created = await put(token, externalId, body);
    expect(created.status).toBe(201);
    expect(created.headers.get('x-request-id')).toBeTruthy();
    const contact = await created.json();
    expect(contact).toStrictEqual({
      id: expect.stringMatching(UUID),
      externalId,
      ...body,
      createdAt: expect.stringMatching(TIMESTAMP),
      updatedAt: contact.createdAt,
    });

    const again = await put(token, externalId, body);
    expect(again.status).toBe(200);
    expect(await again.json()).toStrictEqual(contact);

    const byExternalId = await get(token, `/v1/contacts/${externalId}`);
    expect(byExternalId.status).toBe(200);
    expect(await byExternalId.json()).toStrictEqual(contact);

    const byId = await get(token, `/v1/contacts/by-id/${contact.id}`);
    expect(byId.status).toBe(200);
    expect(await byId.json()).toStrictEqual(contact);
  });

  it('when an answer carries a Contact or names one (PUT, POST, GET, 404, 409), then it says Cache-Control: no-store', async () => {
    const externalId = `private-${randomUUID()}`;
    const email = uniqueEmail('private');
    const created = await put(token, externalId, { email });
    const { id } = await created.json();
    const answers = [
      created,
      await post(token, { email }),
      await get(token, `/v1/contacts/${externalId}`),
      await get(token, `/v1/contacts/by-id/${id}`),
      await get(token, `/v1/contacts/nobody-${randomUUID()}`),
      await put(token, `other-${randomUUID()}`, { email }),
    ];
    expect(answers.map((r) => r.status)).toStrictEqual([201, 200, 200, 200, 404, 409]);
    for (const res of answers) expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('when an existing Contact is PUT with a change, then 200: omitted fields kept, null clears, createdAt kept', async () => {
    const externalId = `user-${randomUUID()}`;
    const email = uniqueEmail('change');
    const contact = await (
      await put(token, externalId, { email, name: 'Before', phone: '+12025550123' })
    ).json();

    const res = await put(token, externalId, { email, name: 'After', phone: null });

    expect(res.status).toBe(200);
    const updated = await res.json();
    expect(updated).toStrictEqual({
      id: contact.id,
      externalId,
      email,
      name: 'After',
      createdAt: contact.createdAt,
      updatedAt: expect.stringMatching(TIMESTAMP),
    });
  });

  it('when a Contact is POSTed by email, then 201 without an externalId key; the same email in another case is 200 with the same id and the email as last written', async () => {
    const email = uniqueEmail('grace');

    const created = await post(token, { email, name: 'Grace' });
    expect(created.status).toBe(201);
    const contact = await created.json();
    expect(contact).toStrictEqual({
      id: expect.stringMatching(UUID),
      email,
      name: 'Grace',
      createdAt: expect.stringMatching(TIMESTAMP),
      updatedAt: contact.createdAt,
    });

    const again = await post(token, { email: email.toUpperCase() });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ id: contact.id, email: email.toUpperCase() });

    const byId = await get(token, `/v1/contacts/by-id/${contact.id}`);
    expect(await byId.json()).toMatchObject({ email: email.toUpperCase() });
  });

  it('when the externalId holds a slash sent as %2F, then it round-trips through the ingress as "a/b"', async () => {
    // A tenant of its own: the externalId "a/b" is used as is.
    const own = await accessToken(await newTenant('Slash'), ['contacts:read', 'contacts:write']);

    const created = await put(own, 'a%2Fb', { email: uniqueEmail('slash') });
    expect(created.status).toBe(201);
    expect((await created.json()).externalId).toBe('a/b');

    const read = await get(own, '/v1/contacts/a%2Fb');
    expect(read.status).toBe(200);
    expect((await read.json()).externalId).toBe('a/b');
  });

  it.each([
    ['by-id and a slash', 'by-id/x'],
    ['unicode and spaces', 'Zoë 名前 ✓'],
    ['a percent sign', '100%'],
    ['a question mark and a hash', 'a?b#c'],
  ])(
    'when the externalId has %s, then it round-trips through the ingress',
    async (_, externalId) => {
      const encoded = encodeURIComponent(`${externalId}-${randomUUID()}`);

      const created = await put(token, encoded, { email: uniqueEmail('enc') });
      expect(created.status).toBe(201);
      const contact = await created.json();
      expect(contact.externalId).toBe(decodeURIComponent(encoded));

      const read = await get(token, `/v1/contacts/${encoded}`);
      expect(read.status).toBe(200);
      expect(await read.json()).toStrictEqual(contact);
    },
  );

  it('when PUT names a new externalId and the email of an email-only Contact, then that Contact gains the externalId (200, same id)', async () => {
    const email = uniqueEmail('claim');
    const emailOnly = await (await post(token, { email })).json();
    const externalId = `claim-${randomUUID()}`;

    const res = await put(token, externalId, { email });

    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: emailOnly.id, externalId, email });
    expect((await get(token, `/v1/contacts/${externalId}`)).status).toBe(200);
  });

  it('when PUT would give a Contact the email of another Contact with a different externalId, then 409 conflict and nothing changes', async () => {
    const email = uniqueEmail('taken');
    const holder = `holder-${randomUUID()}`;
    const other = `other-${randomUUID()}`;
    const held = await (await put(token, holder, { email, name: 'Holder' })).json();
    await put(token, other, { email: uniqueEmail('other') });

    await expectError(await put(token, `new-${randomUUID()}`, { email }), 409, 'conflict');
    await expectError(await put(token, other, { email: email.toUpperCase() }), 409, 'conflict');

    expect(await (await get(token, `/v1/contacts/${holder}`)).json()).toStrictEqual(held);
  });

  it('when 20 PUTs of one new externalId race through the ingress, then one 201 and the rest 200 with one id', async () => {
    const externalId = `race-${randomUUID()}`;
    const email = uniqueEmail('race');

    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => put(token, externalId, { email, name: `N${i}` })),
    );

    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(19);
    const ids = new Set(await Promise.all(answers.map(async (r) => (await r.json()).id)));
    expect(ids.size).toBe(1);
  });
  it('when 20 PUTs and POSTs of one new email race through the ingress, then one 201, the rest 200, one Contact holding the externalId', async () => {
    const externalId = `mixed-${randomUUID()}`;
    const email = uniqueEmail('mixed');

    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0 ? put(token, externalId, { email }) : post(token, { email }),
      ),
    );

    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(19);
    const ids = new Set(await Promise.all(answers.map(async (r) => (await r.json()).id)));
    expect(ids.size).toBe(1);
    expect(await (await get(token, `/v1/contacts/${externalId}`)).json()).toMatchObject({
      id: [...ids][0],
      email,
    });
  });
});

describe('error answers through the ingress', () => {
  it.each([
    ['a bad email', { email: 'not-an-email' }, 'body.email'],
    ['an email of 255 characters', { email: `${'a'.repeat(243)}@example.com` }, 'body.email'],
    ['a null email', { email: null }, 'body.email'],
    ['no email', { name: 'Nameless' }, 'body.email'],
    ['a name of 257 characters', { email: 'a@example.com', name: 'n'.repeat(257) }, 'body.name'],
    ['a name with U+0000', { email: 'a@example.com', name: 'a\u0000b' }, 'body.name'],
    ['a phone that is not E.164', { email: 'a@example.com', phone: '0151 12345678' }, 'body.phone'],
    [
      'the time zone Mars/Olympus',
      { email: 'a@example.com', timeZone: 'Mars/Olympus' },
      'body.timeZone',
    ],
    ['a name of the wrong type', { email: 'a@example.com', name: 42 }, 'body.name'],
    ['an array body', [{ email: 'a@example.com' }], 'body'],
    ['a string body', 'a@example.com', 'body'],
  ])(
    'when the body has %s, then PUT and POST answer 400 validation_error naming it',
    async (_, body, field) => {
      for (const res of [await put(token, `bad-${randomUUID()}`, body), await post(token, body)]) {
        const error = await expectError(res, 400, 'validation_error');
        expect(error.message.startsWith(field)).toBe(true);
      }
    },
  );

  it.each([
    ['256 characters', 'x'.repeat(256)],
    ['a control character', 'a%0Ab'],
  ])(
    'when the externalId has %s, then 400 validation_error naming path.externalId',
    async (_, encoded) => {
      const error = await expectError(
        await put(token, encoded, { email: 'a@example.com' }),
        400,
        'validation_error',
      );
      expect(error.message.startsWith('path.externalId')).toBe(true);
      await expectError(await get(token, `/v1/contacts/${encoded}`), 404, 'not_found');
    },
  );

  it('when the Content-Type is missing or not JSON, then 400 validation_error', async () => {
    for (const contentType of [undefined, 'text/plain']) {
      for (const [method, route] of [
        ['PUT', `/v1/contacts/ct-${randomUUID()}`],
        ['POST', '/v1/contacts'],
      ] as const) {
        const res = await call(method, route, token, undefined, {
          headers: contentType ? { 'content-type': contentType } : {},
          body: Buffer.from(JSON.stringify({ email: uniqueEmail('ct') })),
        });
        await expectError(res, 400, 'validation_error');
      }
    }
  });

  it('when the body is over 1 MiB, then 413 payload_too_large and nothing is stored', async () => {
    const externalId = `big-${randomUUID()}`;

    const res = await put(token, externalId, {
      email: uniqueEmail('big'),
      padding: 'x'.repeat(1024 * 1024),
    });

    await expectError(res, 413, 'payload_too_large');
    await expectError(await get(token, `/v1/contacts/${externalId}`), 404, 'not_found');
  });

  it('when the body is not valid JSON, then 400 validation_error', async () => {
    const res = await call('POST', '/v1/contacts', token, undefined, {
      headers: { 'content-type': 'application/json' },
      body: '{"email":',
    });

    await expectError(res, 400, 'validation_error');
  });

  it('when there is no token or a bad one, then 401 unauthenticated on every Contact route', async () => {
    const routes: Array<[string, string, unknown]> = [
      ['PUT', '/v1/contacts/x', { email: 'a@example.com' }],
      ['POST', '/v1/contacts', { email: 'a@example.com' }],
      ['GET', '/v1/contacts/x', undefined],
      ['GET', `/v1/contacts/by-id/${randomUUID()}`, undefined],
    ];
    for (const [method, route, body] of routes) {
      for (const bad of [undefined, 'not-a-token', `${token.slice(0, -4)}AAAA`]) {
        const res = await call(method, route, bad, body);
        await expectError(res, 401, 'unauthenticated');
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
      }
    }
  });

  it('when the key is the default secret key (events:write contacts:write), then reads answer 403 "missing scope contacts:read"', async () => {
    const writer = await accessToken(tenantId, ['events:write', 'contacts:write']);
    const contact = await (await post(writer, { email: uniqueEmail('writer') })).json();

    for (const route of [`/v1/contacts/by-id/${contact.id}`, '/v1/contacts/anyone']) {
      const error = await expectError(await get(writer, route), 403, 'insufficient_scope');
      expect(error.message).toBe('missing scope contacts:read');
    }
  });

  it('when the key holds only contacts:read, then upserts answer 403 "missing scope contacts:write" and nothing is written', async () => {
    const reader = await accessToken(tenantId, ['contacts:read']);
    const externalId = `ro-${randomUUID()}`;

    for (const res of [
      await put(reader, externalId, { email: uniqueEmail('ro') }),
      await post(reader, { email: uniqueEmail('ro') }),
    ]) {
      const error = await expectError(res, 403, 'insufficient_scope');
      expect(error.message).toBe('missing scope contacts:write');
    }
    await expectError(await get(reader, `/v1/contacts/${externalId}`), 404, 'not_found');
  });

  it('when no Contact has the externalId or id, or the id is malformed, then 404 not_found', async () => {
    await expectError(await get(token, `/v1/contacts/nobody-${randomUUID()}`), 404, 'not_found');
    await expectError(await get(token, `/v1/contacts/by-id/${randomUUID()}`), 404, 'not_found');
    await expectError(await get(token, '/v1/contacts/by-id/not-a-uuid'), 404, 'not_found');
    await expectError(await get(token, '/v1/contacts/by-id/12345'), 404, 'not_found');
  });

  it("when a token of another tenant names this tenant's Contact by id or externalId, then 404 not_found", async () => {
    const externalId = `mine-${randomUUID()}`;
    const contact = await (await put(token, externalId, { email: uniqueEmail('mine') })).json();
    const stranger = await accessToken(await newTenant('Stranger'), [
      'contacts:read',
      'contacts:write',
    ]);

    await expectError(await get(stranger, `/v1/contacts/by-id/${contact.id}`), 404, 'not_found');
    await expectError(await get(stranger, `/v1/contacts/${externalId}`), 404, 'not_found');
  });

  it.each([
    ['DELETE', '/v1/contacts/x', 'GET, PUT'],
    ['PATCH', '/v1/contacts/x', 'GET, PUT'],
    ['GET', '/v1/contacts', 'POST'],
    ['DELETE', `/v1/contacts/by-id/${randomUUID()}`, 'GET'],
  ])(
    'when the method is %s on %s, then 405 method_not_allowed with Allow %s',
    async (method, route, allow) => {
      const res = await call(method, route, token);

      await expectError(res, 405, 'method_not_allowed');
      expect(res.headers.get('allow')).toBe(allow);
    },
  );

  it('when /internal/... is called through the ingress, then 404: identity resolution is not public', async () => {
    for (const authorization of [undefined, `Bearer ${token}`]) {
      const res = await fetch(`${INGRESS}/internal/v1/identities/resolve`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify({ tenantId, items: [{ contactExternalId: 'x' }] }),
      });

      await expectError(res, 404, 'not_found');
    }
  });
});
