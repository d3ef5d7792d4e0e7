// 400 validation_error for every field rule on Events: the message names the
// first invalid Event's index and field, and nothing of the request is recorded.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startEventsService, storedState, type TestEventsService } from '../support.js';

let svc: TestEventsService;
let tenantId: string;
let token: string;
let contactId: string;
beforeAll(async () => {
  svc = await startEventsService();
  ({ tenantId, token } = svc.newTenant());
  contactId = (await svc.contacts.createContact(tenantId, { externalId: 'user-1' })).id;
  await svc.contacts.createOrganization(tenantId, 'acme');
});
afterAll(() => svc.close());

const valid = () => ({
  contactId,
  eventName: 'valid',
  occurredAt: '2026-03-04T05:06:07.123Z',
  dedupKey: `valid-${Math.random()}`,
  properties: { ok: true },
});

async function expectNothingRecorded() {
  const state = await storedState(svc.pool, tenantId);
  expect(state).toStrictEqual({ events: [], claims: [], names: [], outbox: [] });
}

async function expect400(route: string, body: unknown, message: string | RegExp) {
  const res = await svc.record(route, token, body);
  const answer = await res.json();
  expect({ status: res.status, code: answer.code }).toStrictEqual({
    status: 400,
    code: 'validation_error',
  });
  if (typeof message === 'string') expect(answer.message).toBe(message);
  else expect(answer.message).toMatch(message);
  await expectNothingRecorded();
  return answer.message as string;
}

const OVER_32_KIB = { blob: 'x'.repeat(32 * 1024) };
const AT_32_KIB = { b: 'x'.repeat(32 * 1024 - '{"b":""}'.length) };

/** Properties whose objects nest `depth` levels deep (the properties object is level 1). */
function nestedObjects(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let level = 1; level < depth; level += 1) value = { a: value };
  return value;
}

/** Properties holding arrays that nest `depth` levels deep in all (the object included). */
const nestedArrays = (depth: number) =>
  JSON.parse(`{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`) as Record<string, unknown>;

const WELL_FORMED_TEXT = 'must be well-formed Unicode, without an unpaired surrogate';
const WELL_FORMED = new RegExp(`^${WELL_FORMED_TEXT}$`);

/** [what, the invalid change to a valid Event, the field the message names, its text]. */
const RULES: Array<[string, Record<string, unknown>, string, RegExp]> = [
  ['occurredAt is missing', { occurredAt: undefined }, 'occurredAt', /^is required$/],
  [
    'occurredAt has no offset',
    { occurredAt: '2026-03-04T05:06:07' },
    'occurredAt',
    /^must be an RFC 3339 date-time with an offset, e.g. 2026-03-04T05:06:07.123Z$/,
  ],
  ['occurredAt is a date only', { occurredAt: '2026-03-04' }, 'occurredAt', /date/i],
  ['occurredAt is February 30', { occurredAt: '2026-02-30T00:00:00Z' }, 'occurredAt', /date/i],
  [
    'occurredAt is February 29 of a common year',
    { occurredAt: '2026-02-29T00:00:00Z' },
    'occurredAt',
    /date/i,
  ],
  ['occurredAt has hour 25', { occurredAt: '2026-03-04T25:00:00Z' }, 'occurredAt', /date/i],
  ['occurredAt has minute 61', { occurredAt: '2026-03-04T05:61:00Z' }, 'occurredAt', /date/i],
  [
    'occurredAt has an offset of +25:00',
    { occurredAt: '2026-03-04T05:06:07+25:00' },
    'occurredAt',
    /date/i,
  ],
  ['occurredAt is not a date at all', { occurredAt: 'yesterday' }, 'occurredAt', /date/i],
  [
    'occurredAt is a number',
    { occurredAt: 1772600767123 },
    'occurredAt',
    /^must be an RFC 3339 date-time with an offset/,
  ],
  [
    'occurredAt is in year 0000 at an offset that reaches year -1 in UTC',
    { occurredAt: '0000-01-01T00:00:00+01:00' },
    'occurredAt',
    /^must be an instant from 0000-01-01T00:00:00\.000Z to 9999-12-31T23:59:59\.999Z in UTC$/,
  ],
  [
    'occurredAt is on 9999-12-31 at an offset that reaches year 10000 in UTC',
    { occurredAt: '9999-12-31T23:59:59-00:01' },
    'occurredAt',
    /^must be an instant from 0000-01-01T00:00:00\.000Z to 9999-12-31T23:59:59\.999Z in UTC$/,
  ],
  ['eventName is missing', { eventName: undefined }, 'eventName', /^is required$/],
  ['eventName is empty', { eventName: '' }, 'eventName', />=1/],
  ['eventName has 256 characters', { eventName: 'e'.repeat(256) }, 'eventName', /<=255/],
  ['eventName is a number', { eventName: 42 }, 'eventName', /expected string, received number/],
  ['eventName holds U+0000', { eventName: 'a\u0000b' }, 'eventName', /U\+0000/],
  ['dedupKey is empty', { dedupKey: '' }, 'dedupKey', />=1/],
  ['dedupKey has 256 characters', { dedupKey: 'k'.repeat(256) }, 'dedupKey', /<=255/],
  ['dedupKey is a number', { dedupKey: 7 }, 'dedupKey', /expected string/],
  ['dedupKey is null', { dedupKey: null }, 'dedupKey', /expected string, received null/],
  [
    'properties is an array',
    { properties: [1, 2] },
    'properties',
    /expected record, received array/,
  ],
  ['properties is null', { properties: null }, 'properties', /expected record, received null/],
  ['properties is a string', { properties: '{"a":1}' }, 'properties', /expected record/],
  ['properties is over 32 KiB', { properties: OVER_32_KIB }, 'properties', /at most 32768 bytes/],
  [
    'properties holds U+0000 in a value',
    { properties: { a: { b: ['x\u0000'] } } },
    'properties',
    /U\+0000/,
  ],
  ['properties holds U+0000 in a key', { properties: { 'a\u0000': 1 } }, 'properties', /U\+0000/],
  [
    'properties hold U+0000 under a __proto__ key',
    { properties: JSON.parse('{"__proto__":{"a":"x\\u0000"}}') },
    'properties',
    /U\+0000/,
  ],
  [
    'properties are over 32 KiB under a __proto__ key',
    { properties: JSON.parse(`{"__proto__":${JSON.stringify(OVER_32_KIB)}}`) },
    'properties',
    /at most 32768 bytes/,
  ],
  [
    'properties are arrays nested 4,100 levels deep (8 KiB)',
    { properties: nestedArrays(4100) },
    'properties',
    /^must be nested at most 64 levels deep$/,
  ],
  [
    'properties are objects nested 65 levels deep',
    { properties: nestedObjects(65) },
    'properties',
    /^must be nested at most 64 levels deep$/,
  ],
  [
    'properties nest too deep under a __proto__ key',
    { properties: JSON.parse(`{"__proto__":${JSON.stringify(nestedObjects(64))}}`) },
    'properties',
    /^must be nested at most 64 levels deep$/,
  ],
  [
    'organizationExternalId is a number',
    { organizationExternalId: 5 },
    'organizationExternalId',
    /expected string/,
  ],
  [
    'organizationExternalId is empty',
    { organizationExternalId: '' },
    'organizationExternalId',
    />=1/,
  ],
  // Text UTF-8 cannot encode: stored, it would become U+FFFD and match other values.
  ['eventName holds a high surrogate alone', { eventName: 'a\ud800b' }, 'eventName', WELL_FORMED],
  ['eventName holds a low surrogate alone', { eventName: 'a\udc00b' }, 'eventName', WELL_FORMED],
  ['dedupKey holds a surrogate alone', { dedupKey: 'k\udbff' }, 'dedupKey', WELL_FORMED],
  ['occurredAt holds a surrogate alone', { occurredAt: '2026\ud800' }, 'occurredAt', WELL_FORMED],
  [
    'organizationExternalId holds a surrogate alone',
    { organizationExternalId: 'acme\udfff' },
    'organizationExternalId',
    WELL_FORMED,
  ],
  [
    'a properties key holds a surrogate alone',
    { properties: { ok: 1, 'k\ud800': 1 } },
    'properties',
    /^has a key that is not well-formed Unicode/,
  ],
  ['contactId holds a surrogate alone', { contactId: 'c\ud800' }, 'contactId', WELL_FORMED],
  ['a field no route reads holds a surrogate alone', { note: '\ud800' }, 'note', WELL_FORMED],
  ['contactId is missing', { contactId: undefined }, 'contactId', /^is required$/],
  ['contactId is a number', { contactId: 12 }, 'contactId', /expected string, received number/],
  ['contactId is an object', { contactId: { id: 'x' } }, 'contactId', /expected string/],
];

describe('one Event object', () => {
  it.each(RULES)(
    'when %s, then 400 naming event.<field> and nothing recorded',
    async (_what, change, field, text) => {
      const message = await expect400(
        'by-contact-id',
        { ...valid(), ...change },
        new RegExp(`^event\\.${field}: `),
      );
      expect(message.slice(`event.${field}: `.length)).toMatch(text);
    },
  );
});

describe('an array of Events', () => {
  it.each(RULES)(
    'when events[3] has %s, then 400 naming events[3].<field> and nothing recorded',
    async (_what, change, field, text) => {
      const body = [valid(), valid(), valid(), { ...valid(), ...change }, valid()];

      const message = await expect400(
        'by-contact-id',
        body,
        new RegExp(`^events\\[3\\]\\.${field}: `),
      );
      expect(message.slice(`events[3].${field}: `.length)).toMatch(text);
    },
  );

  it('when several Events are invalid, then the message names the first one', async () => {
    const body = [valid(), { ...valid(), eventName: '' }, { ...valid(), occurredAt: 'x' }];

    await expect400('by-contact-id', body, /^events\[1\]\.eventName: /);
  });

  it('when one Event has several invalid fields, then the message names one of them', async () => {
    await expect400(
      'by-contact-id',
      [{ contactId }],
      /^events\[0\]\.(eventName|occurredAt): is required$/,
    );
  });

  it('when the array is empty, then 400 naming the count', async () => {
    await expect400('by-contact-id', [], 'events: must hold 1 to 1000 Event objects; got 0');
  });

  it('when the array holds 1,001 Events, then 400 and none of them is recorded', async () => {
    const body = Array.from({ length: 1001 }, () => ({ ...valid(), dedupKey: undefined }));

    await expect400('by-contact-id', body, 'events: must hold 1 to 1000 Event objects; got 1001');
  });

  it.each([
    ['a string', 'event'],
    ['null', null],
    ['a number', 3],
    ['an array', [valid()]],
  ])('when an element is %s, then 400 naming it', async (_what, element) => {
    await expect400('by-contact-id', [valid(), element], 'events[1]: must be an Event object');
  });
});

describe('properties nested as deep as a 1 MiB body allows', () => {
  it('when the properties nest 500,000 levels deep, then 400 and nothing recorded', async () => {
    const depth = 500_000;
    const event = JSON.stringify({ ...valid(), properties: undefined }).slice(0, -1);
    const rawBody = `${event},"properties":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
    expect(rawBody.length).toBeLessThan(1024 * 1024);

    const res = await svc.request('POST', '/v1/events/by-contact-id', {
      token,
      rawBody,
      headers: { 'content-type': 'application/json' },
    });

    expect(res.status).toBe(400);
    expect(await res.json()).toStrictEqual({
      code: 'validation_error',
      message: 'event.properties: must be nested at most 64 levels deep',
    });
    await expectNothingRecorded();
  });
});

describe('a body that is neither', () => {
  it.each([
    ['a string', '"hello"'],
    ['a number', '42'],
    ['null', 'null'],
    ['true', 'true'],
  ])('when the body is %s, then 400 body: ...', async (_what, rawBody) => {
    const res = await svc.request('POST', '/v1/events/by-contact-id', {
      token,
      rawBody,
      headers: { 'content-type': 'application/json' },
    });

    expect(res.status).toBe(400);
    expect(await res.json()).toStrictEqual({
      code: 'validation_error',
      message: 'body: must be an Event object or an array of 1 to 1000 Event objects',
    });
    await expectNothingRecorded();
  });
});

describe("each route's required identity", () => {
  const common = { eventName: 'x', occurredAt: '2026-03-04T05:06:07Z' };

  it.each([
    ['by-contact-id', 'contactId', { contactExternalId: 'user-1', contactEmail: 'a@example.com' }],
    ['by-external-id', 'contactExternalId', { contactId, contactEmail: 'a@example.com' }],
    ['by-email', 'contactEmail', { contactId, contactExternalId: 'user-1' }],
    ['by-organization', 'organizationExternalId', { contactId }],
  ])(
    'when %s gets an Event without %s (other routes\u2019 fields do not count), then 400',
    async (route, field, others) => {
      await expect400(route, { ...common, ...others }, `event.${field}: is required`);
      await expect400(route, [{ ...common, ...others }], `events[0].${field}: is required`);
    },
  );

  it.each([
    ['by-external-id', { contactExternalId: 'e'.repeat(256) }, 'contactExternalId'],
    ['by-email', { contactEmail: 'e'.repeat(255) }, 'contactEmail'],
    ['by-organization', { organizationExternalId: 'o'.repeat(256) }, 'organizationExternalId'],
    ['by-external-id', { contactExternalId: 12 }, 'contactExternalId'],
    ['by-email', { contactEmail: ['a@example.com'] }, 'contactEmail'],
  ])(
    'when %s gets an identity field that is too long or of the wrong type, then 400 naming it',
    async (route, identity, field) => {
      await expect400(route, { ...common, ...identity }, new RegExp(`^event\\.${field}: `));
    },
  );
});

describe('the limits themselves are accepted', () => {
  it('when eventName and dedupKey have 255 characters and properties exactly 32 KiB, then 202', async () => {
    const { tenantId: own, token: ownToken } = svc.newTenant();
    const contact = await svc.contacts.createContact(own, { externalId: 'limits' });
    expect(Buffer.byteLength(JSON.stringify(AT_32_KIB))).toBe(32 * 1024);

    const res = await svc.record('by-contact-id', ownToken, {
      contactId: contact.id,
      eventName: 'e'.repeat(255),
      dedupKey: 'k'.repeat(255),
      occurredAt: '2026-03-04T05:06:07+14:00',
      properties: AT_32_KIB,
    });

    expect(res.status).toBe(202);
    const { events } = await storedState(svc.pool, own);
    expect(events[0]!.properties).toBe(JSON.stringify(AT_32_KIB));
  });

  it('when properties nest exactly 64 levels deep, objects or arrays, then 202', async () => {
    const { tenantId: own, token: ownToken } = svc.newTenant();
    const contact = await svc.contacts.createContact(own, { externalId: 'depth' });
    const sent = [nestedObjects(64), nestedArrays(64)];

    const res = await svc.record(
      'by-contact-id',
      ownToken,
      sent.map((properties) => ({ ...valid(), contactId: contact.id, properties })),
    );

    expect(res.status).toBe(202);
    const { events } = await storedState(svc.pool, own);
    expect(events.map((e) => JSON.parse(e.properties!))).toEqual(expect.arrayContaining(sent));
  });
});

describe('occurredAt at the ends of the years 0000 to 9999 in UTC', () => {
  // Year 0000 is 1 BC: JavaScript writes it in a form PostgreSQL refuses, which once answered 500.
  it.each([
    ['at the first instant', '0000-01-01T00:00:00Z', '0000-01-01T00:00:00.000Z'],
    ['in year 0000 at a negative offset', '0000-01-01T00:00:00-01:00', '0000-01-01T01:00:00.000Z'],
    ['in year 0000', '0000-06-01T12:00:00Z', '0000-06-01T12:00:00.000Z'],
    [
      'in year 0001 at an offset that reaches year 0000',
      '0001-01-01T00:00:01+00:01',
      '0000-12-31T23:59:01.000Z',
    ],
    [
      'at the last millisecond, with digits beyond it cut',
      '9999-12-31T23:59:59.9999Z',
      '9999-12-31T23:59:59.999Z',
    ],
    ['on 9999-12-31 at a positive offset', '9999-12-31T23:59:59+23:59', '9999-12-31T00:00:59.000Z'],
  ])('when occurredAt is %s, then 202 and the instant is stored', async (_, sent, stored) => {
    const { tenantId: own, token: ownToken } = svc.newTenant();
    const contact = await svc.contacts.createContact(own, { externalId: 'far-dates' });

    const res = await svc.record('by-contact-id', ownToken, [
      { contactId: contact.id, eventName: 'far', occurredAt: '2026-03-04T05:06:07.123Z' },
      { contactId: contact.id, eventName: 'far', occurredAt: sent },
    ]);

    expect(res.status).toBe(202);
    const { events, outbox } = await storedState(svc.pool, own);
    expect(events.map((e) => e.occurred_at.getTime()).sort((a, b) => a - b)).toEqual(
      [Date.parse(stored), Date.parse('2026-03-04T05:06:07.123Z')].sort((a, b) => a - b),
    );
    expect(outbox.map((m) => JSON.parse(m.value).occurredAt)).toContain(stored);
  });

  // JavaScript writes these instants as `-000001-12-31T…` and `+010000-01-01T…`: not RFC 3339.
  it.each([
    ['in year 0000 at an offset that reaches year -1 (2 BC)', '0000-01-01T00:00:00+00:01'],
    ['on 9999-12-31 at an offset that reaches year 10000', '9999-12-31T23:59:59-23:59'],
    ['in lower case, reaching year 10000', '9999-12-31t23:30:00-00:30'],
  ])('when occurredAt is %s, then 400 and nothing recorded', async (_, sent) => {
    await expect400(
      'by-contact-id',
      [valid(), { ...valid(), occurredAt: sent }],
      'events[1].occurredAt: must be an instant from 0000-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z in UTC',
    );
  });
});

describe('occurredAt in lower case (RFC 3339 §5.6 allows `t` and `z`)', () => {
  it.each([
    ['a lower-case t and z', '2026-03-04t05:06:07.123z', '2026-03-04T05:06:07.123Z'],
    ['a lower-case t and an offset', '2026-03-04t05:06:07+02:00', '2026-03-04T03:06:07.000Z'],
    ['a lower-case z only', '2026-03-04T05:06:07z', '2026-03-04T05:06:07.000Z'],
  ])('when occurredAt has %s, then 202 and the instant is stored', async (_, sent, stored) => {
    const { tenantId: own, token: ownToken } = svc.newTenant();
    const contact = await svc.contacts.createContact(own, { externalId: 'lower-case' });

    const res = await svc.record('by-contact-id', ownToken, {
      contactId: contact.id,
      eventName: 'lower',
      occurredAt: sent,
    });

    expect(res.status).toBe(202);
    const { events, outbox } = await storedState(svc.pool, own);
    expect(events.map((e) => e.occurred_at.toISOString())).toEqual([stored]);
    expect(outbox.map((m) => JSON.parse(m.value).occurredAt)).toEqual([stored]);
  });

  it('when a lower-case occurredAt is still not a real date, then 400', async () => {
    await expect400(
      'by-contact-id',
      { ...valid(), occurredAt: '2026-02-30t00:00:00z' },
      /occurredAt: .*date/i,
    );
  });
});

describe('text that is not well-formed Unicode (an unpaired surrogate)', () => {
  const common = { eventName: 'x', occurredAt: '2026-03-04T05:06:07Z' };

  it.each([
    ['by-external-id', { contactExternalId: 'user-1\ud800' }, 'contactExternalId'],
    ['by-email', { contactEmail: 'lone\udc00@example.com' }, 'contactEmail'],
    ['by-organization', { organizationExternalId: 'acme\ud801' }, 'organizationExternalId'],
  ])(
    'when %s gets an identity field holding one, then 400 naming it',
    async (route, identity, field) => {
      await expect400(route, { ...common, ...identity }, `event.${field}: ${WELL_FORMED_TEXT}`);
      await expect400(
        route,
        [{ ...common, ...identity }],
        `events[0].${field}: ${WELL_FORMED_TEXT}`,
      );
    },
  );

  it('when a value deep in properties holds one, then 400 naming its place', async () => {
    await expect400(
      'by-contact-id',
      [valid(), { ...valid(), properties: { a: [{ b: 'ok' }, { b: 'x\udfff' }] } }],
      `events[1].properties.a[1].b: ${WELL_FORMED_TEXT}`,
    );
  });

  it('when an Event before it breaks another rule, then the text is named: it is checked first', async () => {
    await expect400(
      'by-contact-id',
      [
        { ...valid(), eventName: '' },
        { ...valid(), eventName: '\ud800' },
      ],
      `events[1].eventName: ${WELL_FORMED_TEXT}`,
    );
  });

  it('when strings and keys hold escaped surrogate pairs, then 202 and they are stored', async () => {
    const { tenantId: own, token: ownToken } = svc.newTenant();
    const contact = await svc.contacts.createContact(own, { externalId: 'pairs' });
    const event = `{"contactId":"${contact.id}","eventName":"smile \\ud83d\\ude00","occurredAt":"2026-03-04T05:06:07Z","properties":{"\\uD83D\\uDE00":"\\ud83d\\ude00"}}`;

    const res = await svc.request('POST', '/v1/events/by-contact-id', {
      token: ownToken,
      rawBody: event,
      headers: { 'content-type': 'application/json' },
    });

    expect(res.status).toBe(202);
    const { events } = await storedState(svc.pool, own);
    expect(events.map((e) => [e.event_name, JSON.parse(e.properties!)])).toEqual([
      ['smile 😀', { '😀': '😀' }],
    ]);
  });
});
