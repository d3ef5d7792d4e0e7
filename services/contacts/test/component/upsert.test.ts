// PUT /v1/contacts/{externalId} and POST /v1/contacts: the answer, what is stored, and the
// identity rules (docs/api-reference.md#contacts-and-identities).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { contactChangedMessage } from '@herald/messages';
import {
  startContactsService,
  TIMESTAMP,
  uniqueEmail,
  UUID,
  type TestContactsService,
} from '../support.js';

let svc: TestContactsService;
beforeAll(async () => {
  svc = await startContactsService();
});
afterAll(() => svc.close());

const path = (externalId: string) => `/v1/contacts/${encodeURIComponent(externalId)}`;
const put = (token: string, externalId: string, body: unknown) =>
  svc.request('PUT', path(externalId), { token, body });
const post = (token: string, body: unknown) => svc.request('POST', '/v1/contacts', { token, body });
const get = (token: string, externalId: string) => svc.request('GET', path(externalId), { token });
const getById = (token: string, id: string) =>
  svc.request('GET', `/v1/contacts/by-id/${id}`, { token });

async function rowsOf(tenantId: string) {
  const { rows } = await svc.pool.query(
    'select * from contacts where tenant_id = $1 order by created_at',
    [tenantId],
  );
  return rows;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('PUT /v1/contacts/{externalId}', () => {
  it('when the externalId is new, then 201 with the whole Contact object and nothing else', async () => {
    const { token } = svc.newTenant();
    const email = uniqueEmail('ada');

    const res = await put(token, 'user-1', {
      email,
      name: 'Ada Lovelace',
      phone: '+4915112345678',
      timeZone: 'Europe/Berlin',
    });

    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const contact = await res.json();
    expect(contact).toStrictEqual({
      id: expect.stringMatching(UUID),
      externalId: 'user-1',
      email,
      name: 'Ada Lovelace',
      phone: '+4915112345678',
      timeZone: 'Europe/Berlin',
      createdAt: expect.stringMatching(TIMESTAMP),
      updatedAt: contact.createdAt,
    });
  });

  it('when only the email is sent, then the optional fields are left out of the answer, not null', async () => {
    const { token } = svc.newTenant();

    const res = await put(token, 'user-1', { email: 'only@example.com' });

    expect(res.status).toBe(201);
    expect(Object.keys(await res.json()).sort()).toEqual(
      ['createdAt', 'email', 'externalId', 'id', 'updatedAt'].sort(),
    );
  });

  it('when the externalId exists, then 200 with the same id, the change applied and createdAt kept', async () => {
    const { token } = svc.newTenant();
    const created = await (await put(token, 'user-1', { email: 'a@example.com' })).json();
    await sleep(5);

    const res = await put(token, 'user-1', { email: 'a@example.com', name: 'Ada' });

    expect(res.status).toBe(200);
    const updated = await res.json();
    expect(updated).toStrictEqual({ ...created, name: 'Ada', updatedAt: expect.any(String) });
    expect(Date.parse(updated.updatedAt)).toBeGreaterThan(Date.parse(created.updatedAt));
    expect(updated.updatedAt).toMatch(TIMESTAMP);
  });

  it('when the same body is sent again, then 200 and nothing changes (updatedAt included)', async () => {
    const { tenantId, token } = svc.newTenant();
    const body = {
      email: 'same@example.com',
      name: 'Same',
      phone: '+441234567890',
      timeZone: 'UTC',
    };
    const first = await (await put(token, 'user-1', body)).json();
    const stored = await rowsOf(tenantId);
    await sleep(5);

    const again = await put(token, 'user-1', body);

    expect(again.status).toBe(200);
    expect(await again.json()).toStrictEqual(first);
    expect(await rowsOf(tenantId)).toStrictEqual(stored);
  });

  it('when optional fields are left out, then they keep their stored values', async () => {
    const { token } = svc.newTenant();
    await put(token, 'user-1', {
      email: 'keep@example.com',
      name: 'Kept',
      phone: '+4915112345678',
      timeZone: 'Asia/Tokyo',
    });

    const res = await put(token, 'user-1', { email: 'keep@example.com' });

    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      name: 'Kept',
      phone: '+4915112345678',
      timeZone: 'Asia/Tokyo',
    });
  });

  it('when optional fields are null, then they are cleared and left out of the answer', async () => {
    const { tenantId, token } = svc.newTenant();
    await put(token, 'user-1', {
      email: 'clear@example.com',
      name: 'Cleared',
      phone: '+4915112345678',
      timeZone: 'Asia/Tokyo',
    });

    const res = await put(token, 'user-1', {
      email: 'clear@example.com',
      name: null,
      phone: null,
      timeZone: null,
    });

    expect(res.status).toBe(200);
    const contact = await res.json();
    expect(contact).not.toHaveProperty('name');
    expect(contact).not.toHaveProperty('phone');
    expect(contact).not.toHaveProperty('timeZone');
    expect(await rowsOf(tenantId)).toEqual([
      expect.objectContaining({ name: null, phone: null, time_zone: null }),
    ]);
  });

  it('when the body carries unknown fields (or id, externalId, createdAt), then they are ignored and not stored', async () => {
    const { tenantId, token } = svc.newTenant();

    const res = await put(token, 'user-1', {
      email: 'extra@example.com',
      favouriteColour: 'ultramarine-unknown-field',
      id: '00000000-0000-4000-8000-000000000000',
      externalId: 'someone-else',
      createdAt: '2000-01-01T00:00:00.000Z',
    });

    expect(res.status).toBe(201);
    const contact = await res.json();
    expect(contact).not.toHaveProperty('favouriteColour');
    expect(contact.id).not.toBe('00000000-0000-4000-8000-000000000000');
    expect(contact.externalId).toBe('user-1');
    expect(contact.createdAt).not.toBe('2000-01-01T00:00:00.000Z');
    const stored = JSON.stringify(await rowsOf(tenantId));
    expect(stored).not.toContain('ultramarine-unknown-field');
    expect(stored).not.toContain('someone-else');
  });

  it.each([
    ['a slash', 'a/b'],
    ['the literal by-id', 'by-id'],
    ['by-id and a slash', 'by-id/x'],
    ['unicode and spaces', 'Zoë 名前 ✓'],
    ['percent signs', '100%25 %2F'],
    ['255 characters', 'x'.repeat(255)],
  ])(
    'when the externalId has %s, then it round-trips exactly through PUT and GET',
    async (_, externalId) => {
      const { token } = svc.newTenant();

      const created = await put(token, externalId, { email: uniqueEmail() });
      expect(created.status).toBe(201);
      expect((await created.json()).externalId).toBe(externalId);

      const read = await get(token, externalId);
      expect(read.status).toBe(200);
      expect((await read.json()).externalId).toBe(externalId);
    },
  );

  it('when the email is written in another case by PUT, then it is the same Contact and the new spelling is kept', async () => {
    const { token } = svc.newTenant();
    const created = await (await put(token, 'user-1', { email: 'grace@example.com' })).json();

    const res = await put(token, 'user-1', { email: 'Grace@Example.COM' });

    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: created.id, email: 'Grace@Example.COM' });
  });

  it('when the email changes to an unused one, then 200 and the Contact holds the new email', async () => {
    const { token } = svc.newTenant();
    const created = await (await put(token, 'user-1', { email: 'old@example.com' })).json();

    const res = await put(token, 'user-1', { email: 'new@example.com' });

    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: created.id, email: 'new@example.com' });
    const byOld = await post(token, { email: 'old@example.com' });
    expect(byOld.status).toBe(201); // the old address is free again: a new Contact
    expect((await byOld.json()).id).not.toBe(created.id);
  });

  it('when two tenants use the same externalId and email, then each has its own Contact', async () => {
    const a = svc.newTenant();
    const b = svc.newTenant();

    const inA = await put(a.token, 'user-1', { email: 'shared@example.com' });
    const inB = await put(b.token, 'user-1', { email: 'shared@example.com' });

    expect(inA.status).toBe(201);
    expect(inB.status).toBe(201);
    expect((await inA.json()).id).not.toBe((await inB.json()).id);
  });
});

describe('POST /v1/contacts', () => {
  it('when the email is new, then 201 with a Contact that has no externalId key', async () => {
    const { token } = svc.newTenant();

    const res = await post(token, { email: 'new@example.com', name: 'New' });

    expect(res.status).toBe(201);
    const contact = await res.json();
    expect(contact).toStrictEqual({
      id: expect.stringMatching(UUID),
      email: 'new@example.com',
      name: 'New',
      createdAt: expect.stringMatching(TIMESTAMP),
      updatedAt: contact.createdAt,
    });
  });

  it('when the email is known, then 200 with the same id and the change applied', async () => {
    const { token } = svc.newTenant();
    const created = await (await post(token, { email: 'known@example.com' })).json();

    const res = await post(token, { email: 'known@example.com', timeZone: 'America/New_York' });

    expect(res.status).toBe(200);
    expect(await res.json()).toStrictEqual({
      ...created,
      timeZone: 'America/New_York',
      updatedAt: expect.stringMatching(TIMESTAMP),
    });
  });

  it('when the same email is sent in another case, then 200 with the same id and the email as last written', async () => {
    const { token } = svc.newTenant();
    const created = await (await post(token, { email: 'ada@example.com' })).json();

    const res = await post(token, { email: 'Ada@Example.com' });

    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: created.id, email: 'Ada@Example.com' });
    expect(await (await getById(token, created.id)).json()).toMatchObject({
      email: 'Ada@Example.com',
    });
  });

  it('when the same body is sent again, then 200 and nothing changes', async () => {
    const { token } = svc.newTenant();
    const first = await (await post(token, { email: 'twice@example.com', name: 'Twice' })).json();

    const again = await post(token, { email: 'twice@example.com', name: 'Twice' });

    expect(again.status).toBe(200);
    expect(await again.json()).toStrictEqual(first);
  });

  it('when the email belongs to a Contact with an externalId, then that Contact is updated and keeps its externalId', async () => {
    const { token } = svc.newTenant();
    const owned = await (await put(token, 'user-1', { email: 'owned@example.com' })).json();

    const res = await post(token, { email: 'OWNED@example.com', name: 'Via email' });

    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      id: owned.id,
      externalId: 'user-1',
      email: 'OWNED@example.com',
      name: 'Via email',
    });
  });
});

describe('identity rules', () => {
  it('B.2: when PUT names an unused externalId and the email of an email-only Contact, then that Contact gains the externalId (200, same id)', async () => {
    const { tenantId, token } = svc.newTenant();
    const emailOnly = await (
      await post(token, { email: 'claim@example.com', name: 'Before' })
    ).json();

    const res = await put(token, 'user-9', { email: 'Claim@Example.com', phone: '+12025550123' });

    expect(res.status).toBe(200);
    expect(await res.json()).toStrictEqual({
      id: emailOnly.id,
      externalId: 'user-9',
      email: 'Claim@Example.com',
      name: 'Before',
      phone: '+12025550123',
      createdAt: emailOnly.createdAt,
      updatedAt: expect.stringMatching(TIMESTAMP),
    });
    expect(await rowsOf(tenantId)).toHaveLength(1);
    expect((await get(token, 'user-9')).status).toBe(200);
  });

  it('B.3: when PUT names a new externalId with the email of a Contact that has another externalId, then 409 conflict and nothing changes', async () => {
    const { tenantId, token } = svc.newTenant();
    await put(token, 'y', { email: 'taken@example.com', name: 'Y' });
    const before = await rowsOf(tenantId);

    const res = await put(token, 'x', { email: 'TAKEN@example.com', name: 'X' });

    expect(res.status).toBe(409);
    expect(await res.json()).toStrictEqual({ code: 'conflict', message: expect.any(String) });
    expect(await rowsOf(tenantId)).toStrictEqual(before);
    expect((await get(token, 'x')).status).toBe(404);
  });

  it('B.3: when PUT changes a Contact email to one another Contact holds, then 409 conflict and nothing changes', async () => {
    const { tenantId, token } = svc.newTenant();
    await put(token, 'x', { email: 'x@example.com' });
    await put(token, 'y', { email: 'y@example.com' });
    const before = await rowsOf(tenantId);

    const res = await put(token, 'x', { email: 'y@example.com', name: 'Renamed' });

    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ code: 'conflict' });
    expect(await rowsOf(tenantId)).toStrictEqual(before);
  });

  it('B.3: when PUT changes a Contact email to the one of an email-only Contact, then 409 conflict (Contacts are never merged)', async () => {
    const { tenantId, token } = svc.newTenant();
    await put(token, 'x', { email: 'x@example.com' });
    await post(token, { email: 'loose@example.com' });
    const before = await rowsOf(tenantId);

    const res = await put(token, 'x', { email: 'loose@example.com' });

    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ code: 'conflict' });
    expect(await rowsOf(tenantId)).toStrictEqual(before);
  });

  it('B.3: when a 409 happens, then nothing is enqueued for Kafka', async () => {
    const { tenantId, token } = svc.newTenant();
    await put(token, 'y', { email: 'taken@example.com' });
    const count = async () =>
      (
        await svc.pool.query(
          "select count(*)::int as n from outbox where value::jsonb ->> 'tenantId' = $1",
          [tenantId],
        )
      ).rows[0].n;
    const before = await count();

    expect((await put(token, 'x', { email: 'taken@example.com' })).status).toBe(409);

    expect(await count()).toBe(before);
  });
});

describe('Kafka: contact changes go to the outbox', () => {
  async function outboxFor(contactId: string) {
    const { rows } = await svc.pool.query<{
      topic: string;
      key: string;
      value: string;
      subject_id: string;
    }>('select topic, key, value, subject_id from outbox where key = $1 order by id', [contactId]);
    return rows.map((r) => ({ ...r, value: JSON.parse(r.value) }));
  }

  it('when a Contact is created, then one contact.created message (version 1) with the Contact is enqueued, keyed by its id', async () => {
    const { tenantId, token } = svc.newTenant();
    const body = {
      email: uniqueEmail(),
      name: 'K \u00e9 "quoted" \\ \u2603',
      phone: '+4915112345678',
      timeZone: 'Europe/Berlin',
    };
    const contact = await (await put(token, 'user-1', body)).json();

    expect(await outboxFor(contact.id)).toStrictEqual([
      {
        topic: 'herald.contacts.changed',
        key: contact.id,
        subject_id: contact.id,
        value: {
          version: 1,
          type: 'contact.created',
          messageId: expect.stringMatching(UUID),
          tenantId,
          occurredAt: contact.createdAt,
          contact,
        },
      },
    ]);
    expect(contactChangedMessage.safeParse((await outboxFor(contact.id))[0]!.value).success).toBe(
      true,
    );
    // The bytes Kafka gets are compact JSON, as JSON.stringify writes it.
    const { rows } = await svc.pool.query<{ value: string }>(
      'select value from outbox where key = $1',
      [contact.id],
    );
    expect(rows[0]!.value).toBe(JSON.stringify(JSON.parse(rows[0]!.value)));
  });

  it('when a Contact is updated by PUT and POST, then a contact.updated message follows each change, and a repeat adds none', async () => {
    const { token } = svc.newTenant();
    const email = uniqueEmail();
    const created = await (await post(token, { email })).json();
    await sleep(2);
    const claimed = await (await put(token, 'user-1', { email })).json();
    await put(token, 'user-1', { email }); // no change
    await sleep(2);
    const renamed = await (await post(token, { email, name: 'Renamed' })).json();

    const messages = await outboxFor(created.id);

    expect(messages.map((m) => m.value.type)).toEqual([
      'contact.created',
      'contact.updated',
      'contact.updated',
    ]);
    expect(messages[1]!.value).toMatchObject({ version: 1, contact: claimed });
    expect(messages[2]!.value).toMatchObject({
      version: 1,
      occurredAt: renamed.updatedAt,
      contact: renamed,
    });
    expect(new Set(messages.map((m) => m.value.messageId)).size).toBe(3);
  });
});

describe('validation: 400 validation_error naming the field, nothing stored', () => {
  const bodies: Array<[string, string, unknown]> = [
    ['an email without @', 'body.email', { email: 'not-an-email' }],
    ['an email with a space', 'body.email', { email: 'a b@example.com' }],
    ['an empty email', 'body.email', { email: '' }],
    ['an email of 255 characters', 'body.email', { email: `${'a'.repeat(243)}@example.com` }],
    ['an email with U+0000', 'body.email', { email: 'a\u0000b@example.com' }],
    ['an email that is a number', 'body.email', { email: 42 }],
    ['a null email', 'body.email', { email: null }],
    ['no email', 'body.email', { name: 'Nameless' }],
    ['a name of 257 characters', 'body.name', { email: 'a@example.com', name: 'n'.repeat(257) }],
    ['an empty name', 'body.name', { email: 'a@example.com', name: '' }],
    ['a name with U+0000', 'body.name', { email: 'a@example.com', name: 'Ada\u0000' }],
    ['an email with an unpaired surrogate', 'body.email', { email: 'lone\ud800@example.com' }],
    ['a name with an unpaired surrogate', 'body.name', { email: 'a@example.com', name: 'A\udc00' }],
    [
      'an unknown field with an unpaired surrogate in a key',
      'body.traits',
      { email: 'a@example.com', traits: { 'plan\ud800': 'pro' } },
    ],
    ['a name that is a number', 'body.name', { email: 'a@example.com', name: 42 }],
    ['a name that is an object', 'body.name', { email: 'a@example.com', name: { first: 'A' } }],
    ['a phone without +', 'body.phone', { email: 'a@example.com', phone: '4915112345678' }],
    ['a phone with one digit', 'body.phone', { email: 'a@example.com', phone: '+1' }],
    [
      'a phone with 16 digits',
      'body.phone',
      { email: 'a@example.com', phone: `+${'1'.repeat(16)}` },
    ],
    ['a phone with spaces', 'body.phone', { email: 'a@example.com', phone: '+49 151 1234' }],
    ['a phone that is a number', 'body.phone', { email: 'a@example.com', phone: 4915112345678 }],
    [
      'the time zone Mars/Olympus',
      'body.timeZone',
      { email: 'a@example.com', timeZone: 'Mars/Olympus' },
    ],
    ['an empty time zone', 'body.timeZone', { email: 'a@example.com', timeZone: '' }],
    ['a time zone that is a boolean', 'body.timeZone', { email: 'a@example.com', timeZone: true }],
    ['an array body', 'body', [{ email: 'a@example.com' }]],
    ['an empty array body', 'body', []],
    ['a string body', 'body', 'a@example.com'],
    ['a number body', 'body', 42],
    ['a null body', 'body', null],
  ];

  it.each(bodies)('PUT: when the body has %s, then 400 naming %s', async (_, field, body) => {
    const { tenantId, token } = svc.newTenant();

    const res = await put(token, 'user-1', body);

    expect(res.status).toBe(400);
    const error = await res.json();
    expect(error).toStrictEqual({ code: 'validation_error', message: expect.any(String) });
    expect(error.message).toMatch(new RegExp(`^${field.replace('.', '\\.')}\\b`));
    expect(await rowsOf(tenantId)).toEqual([]);
  });

  it.each(bodies)('POST: when the body has %s, then 400 naming %s', async (_, field, body) => {
    const { tenantId, token } = svc.newTenant();

    const res = await post(token, body);

    expect(res.status).toBe(400);
    const error = await res.json();
    expect(error).toMatchObject({ code: 'validation_error' });
    expect(error.message).toMatch(new RegExp(`^${field.replace('.', '\\.')}\\b`));
    expect(await rowsOf(tenantId)).toEqual([]);
  });

  it.each([
    ['256 characters', 'x'.repeat(256)],
    ['a newline', 'a\nb'],
    ['a tab', 'a\tb'],
    ['U+0000', 'a\u0000b'],
    ['U+007F', 'a\u007fb'],
    ['a C1 control character', 'a\u0085b'],
  ])('when the externalId has %s, then 400 naming path.externalId', async (_, externalId) => {
    const { tenantId, token } = svc.newTenant();

    const res = await put(token, externalId, { email: 'a@example.com' });

    expect(res.status).toBe(400);
    expect(await res.json()).toStrictEqual({
      code: 'validation_error',
      message: expect.stringMatching(/^path\.externalId\b/),
    });
    expect(await rowsOf(tenantId)).toEqual([]);
  });

  it('when the path has malformed percent-encoding, then 400 validation_error', async () => {
    const { token } = svc.newTenant();

    const res = await svc.request('PUT', '/v1/contacts/a%E0%A4%A', {
      token,
      body: { email: 'a@example.com' },
    });

    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'validation_error' });
  });

  it.each([
    ['PUT', '/v1/contacts/user-1'],
    ['POST', '/v1/contacts'],
  ])('%s: when the body is not valid JSON, then 400 validation_error', async (method, route) => {
    const { token } = svc.newTenant();

    const res = await svc.request(method, route, {
      token,
      rawBody: '{"email": "a@example.com"',
      headers: { 'content-type': 'application/json' },
    });

    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'validation_error' });
  });

  it.each([
    ['PUT', '/v1/contacts/user-1', 'missing', undefined],
    ['PUT', '/v1/contacts/user-1', 'text/plain', 'text/plain'],
    ['POST', '/v1/contacts', 'missing', undefined],
    ['POST', '/v1/contacts', 'form-encoded', 'application/x-www-form-urlencoded'],
  ])(
    '%s %s: when the Content-Type is %s, then 400 validation_error and nothing is stored',
    async (method, route, _, contentType) => {
      const { tenantId, token } = svc.newTenant();

      // A Buffer body makes fetch send no Content-Type of its own.
      const res = await fetch(`${svc.url}${route}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(contentType ? { 'content-type': contentType } : {}),
        },
        body: Buffer.from(JSON.stringify({ email: 'a@example.com' })),
      });

      expect(res.status).toBe(400);
      expect(await res.json()).toStrictEqual({
        code: 'validation_error',
        message: expect.stringContaining('Content-Type'),
      });
      expect(await rowsOf(tenantId)).toEqual([]);
    },
  );

  it.each([
    ['PUT', '/v1/contacts/user-1'],
    ['POST', '/v1/contacts'],
  ])(
    '%s: when the body is over 1 MiB, then 413 payload_too_large and nothing is stored',
    async (method, route) => {
      const { tenantId, token } = svc.newTenant();

      const res = await svc.request(method, route, {
        token,
        body: { email: 'big@example.com', padding: 'x'.repeat(1024 * 1024) },
      });

      expect(res.status).toBe(413);
      expect(await res.json()).toStrictEqual({
        code: 'payload_too_large',
        message: expect.any(String),
      });
      expect(await rowsOf(tenantId)).toEqual([]);
    },
  );

  it('when the Content-Type is application/json with a charset, then it is accepted', async () => {
    const { token } = svc.newTenant();

    const res = await svc.request('PUT', '/v1/contacts/user-1', {
      token,
      rawBody: JSON.stringify({ email: 'a@example.com' }),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });

    expect(res.status).toBe(201);
  });

  it.each([
    ['UTC', { timeZone: 'UTC' }],
    ['America/Argentina/Buenos_Aires', { timeZone: 'America/Argentina/Buenos_Aires' }],
    ['a phone of 15 digits', { phone: `+${'9'.repeat(15)}` }],
    ['a phone of 2 digits', { phone: '+12' }],
    ['a name of 256 characters', { name: 'n'.repeat(256) }],
    ['an email of 254 characters', { email: `${'a'.repeat(242)}@example.com` }],
    ['an email with a dot-free domain', { email: 'root@localhost' }],
  ])('when the body has %s, then it is accepted', async (_, fields) => {
    const { token } = svc.newTenant();

    const res = await put(token, 'user-1', { email: 'ok@example.com', ...fields });

    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject(fields);
  });
});

describe('text that is not well-formed Unicode: 400, never stored as U+FFFD', () => {
  const NOT_WELL_FORMED = 'must be well-formed Unicode, without an unpaired surrogate';

  it('when emails differ only in an unpaired surrogate, then each is a 400 and no Contact is made', async () => {
    const { tenantId, token } = svc.newTenant();
    const unique = uniqueEmail('lone').split('@')[0]!;

    for (const surrogate of ['\\ud800', '\\udc00', '\\ud801']) {
      // JSON escapes, as the caller wrote them.
      const rawBody = `{"email":"lone${surrogate}-${unique}@x.com"}`;
      const res = await svc.request('POST', '/v1/contacts', {
        token,
        rawBody,
        headers: { 'content-type': 'application/json' },
      });

      expect({ status: res.status, body: await res.json() }).toStrictEqual({
        status: 400,
        body: { code: 'validation_error', message: `body.email: ${NOT_WELL_FORMED}` },
      });
    }
    expect(await rowsOf(tenantId)).toEqual([]);
  });

  it.each([
    ['email', { email: 'a\udfff@example.com' }],
    ['name', { email: 'a@example.com', name: 'Ada \ud83d' }],
    ['phone', { email: 'a@example.com', phone: '+49\ud800' }],
    ['timeZone', { email: 'a@example.com', timeZone: 'Europe/Berlin\udc00' }],
  ])('PUT: when %s holds an unpaired surrogate, then 400 naming it', async (field, body) => {
    const { tenantId, token } = svc.newTenant();

    const res = await put(token, 'user-1', body);

    expect(await res.json()).toStrictEqual({
      code: 'validation_error',
      message: `body.${field}: ${NOT_WELL_FORMED}`,
    });
    expect(await rowsOf(tenantId)).toEqual([]);
  });

  it('when the body bytes are not UTF-8, then 400, not a Contact whose email holds U+FFFD', async () => {
    const { tenantId, token } = svc.newTenant();
    const unique = uniqueEmail('raw').split('@')[0]!;

    for (const bytes of ['eda080', 'eda081', 'ff']) {
      const res = await fetch(`${svc.url}/v1/contacts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: Buffer.concat([
          Buffer.from(`{"email":"${unique}`),
          Buffer.from(bytes, 'hex'),
          Buffer.from('@x.com"}'),
        ]),
      });

      expect({ status: res.status, body: await res.json() }).toStrictEqual({
        status: 400,
        body: { code: 'validation_error', message: 'request body is not valid UTF-8' },
      });
    }
    expect(await rowsOf(tenantId)).toEqual([]);
  });

  it('when the externalId in the path percent-encodes a surrogate (%ED%A0%80, not UTF-8), then 400 on every route', async () => {
    const { tenantId, token } = svc.newTenant();
    const id = 'x%ED%A0%80';

    const answers = [
      await svc.request('PUT', `/v1/contacts/${id}`, { token, body: { email: 'a@example.com' } }),
      await svc.request('GET', `/v1/contacts/${id}`, { token }),
      await svc.request('GET', `/v1/contacts/${id}/export`, { token }),
      await svc.request('POST', `/v1/contacts/${id}/erase`, { token }),
    ];

    for (const res of answers) {
      expect({ status: res.status, body: await res.json() }).toStrictEqual({
        status: 400,
        body: { code: 'validation_error', message: 'the path has malformed percent-encoding' },
      });
    }
    expect(await rowsOf(tenantId)).toEqual([]);
  });
});

describe('access', () => {
  it.each([
    ['PUT', '/v1/contacts/user-1'],
    ['POST', '/v1/contacts'],
  ])(
    '%s: when the key lacks contacts:write, then 403 insufficient_scope naming it',
    async (method, route) => {
      const { tenantId } = svc.newTenant();
      const token = svc.tokenFor(tenantId, ['contacts:read', 'events:write', 'contacts:export']);

      const res = await svc.request(method, route, { token, body: { email: 'a@example.com' } });

      expect(res.status).toBe(403);
      expect(await res.json()).toStrictEqual({
        code: 'insufficient_scope',
        message: 'missing scope contacts:write',
      });
      expect(await rowsOf(tenantId)).toEqual([]);
    },
  );

  it.each([
    ['PUT', '/v1/contacts/user-1'],
    ['POST', '/v1/contacts'],
  ])(
    '%s: when there is no token, then 401 unauthenticated (before the body is looked at)',
    async (method, route) => {
      const res = await svc.request(method, route, { body: { email: 42 } });

      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
      expect(await res.json()).toMatchObject({ code: 'unauthenticated' });
    },
  );

  it('when the token is expired, from another issuer or for another audience, then 401 unauthenticated', async () => {
    const { tenantId } = svc.newTenant();
    for (const options of [
      { expiresIn: -60 },
      { issuer: 'someone-else' },
      { audience: 'other-api' },
    ]) {
      const token = svc.tokenFor(tenantId, ['contacts:write'], options);

      const res = await put(token, 'user-1', { email: 'a@example.com' });

      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 'unauthenticated' });
    }
    expect(await rowsOf(tenantId)).toEqual([]);
  });

  it.each([
    ['DELETE', '/v1/contacts/user-1', 'GET, PUT'],
    ['PATCH', '/v1/contacts/user-1', 'GET, PUT'],
    ['POST', '/v1/contacts/user-1', 'GET, PUT'],
    ['GET', '/v1/contacts', 'POST'],
    ['PUT', '/v1/contacts', 'POST'],
    ['DELETE', '/v1/contacts', 'POST'],
  ])(
    'when the method is %s on %s, then 405 method_not_allowed with Allow',
    async (method, route, allow) => {
      const { token } = svc.newTenant();

      const res = await svc.request(method, route, { token });

      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe(allow);
      expect(await res.json()).toMatchObject({ code: 'method_not_allowed' });
    },
  );
});
