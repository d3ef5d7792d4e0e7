// The Event routes (validation, all or nothing, dedup, CORS, errors, export) through the ingress, exactly as
// a customer calls them: create a key, exchange it for a token, upsert the Contact, record
// Events about it. What was recorded is read back as a customer can: through the Contact's
// export, the operator API's event-name catalog and the operator CLI; and, as Journeys read it,
// from Kafka.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventRecordedMessage, TOPICS } from '@herald/messages';
import { watchTenant, type TenantWatch } from '@herald/testing';
import {
  accessToken,
  admin,
  basic,
  call,
  exchange,
  expectError,
  INGRESS,
  newKey,
  newTenant,
  runCommand,
} from './support.js';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const ROUTES = ['by-contact-id', 'by-external-id', 'by-email', 'by-organization'] as const;
type Route = (typeof ROUTES)[number];

/** Every scope: record Events, write Contacts, and read back what was recorded. */
const ALL_SCOPES = [
  'events:write',
  'contacts:write',
  'contacts:read',
  'contacts:export',
  'contacts:erase',
];

interface Contact {
  id: string;
  externalId: string;
  email: string;
}

/** One Tenant with a Contact-writing, exporting token and an organization. */
interface Fixture {
  tenantId: string;
  token: string;
  organization: string;
}

type EventBody = Record<string, unknown>;

async function newOrganization(tenantId: string, externalId = `org-${randomUUID()}`) {
  const res = await admin('POST', `/tenants/${tenantId}/organizations`, { externalId });
  if (res.status !== 201) throw new Error(`organization create answered ${res.status}`);
  return externalId;
}

async function newFixture(name: string): Promise<Fixture> {
  const tenantId = await newTenant(name);
  return {
    tenantId,
    token: await accessToken(tenantId, ALL_SCOPES),
    organization: await newOrganization(tenantId),
  };
}

const record = (token: string | undefined, route: Route, body: unknown) =>
  call('POST', `/v1/events/${route}`, token, body);

async function newContact(f: Fixture, label = 'contact'): Promise<Contact> {
  const externalId = `${label}-${randomUUID()}`;
  const res = await call('PUT', `/v1/contacts/${externalId}`, f.token, {
    email: `${label}-${randomUUID().slice(0, 8)}@example.com`,
  });
  if (res.status !== 201) throw new Error(`contact create answered ${res.status}`);
  return res.json<Contact>();
}

/**
 * The route's identity fields naming `contact`; by organization, the fixture's organization with
 * the Contact as the acting one (so the Event is in the Contact's export too).
 */
function identity(route: Route, f: Fixture, contact: Contact): EventBody {
  switch (route) {
    case 'by-contact-id':
      return { contactId: contact.id };
    case 'by-external-id':
      return { contactExternalId: contact.externalId };
    case 'by-email':
      return { contactEmail: contact.email };
    case 'by-organization':
      return { organizationExternalId: f.organization, contactId: contact.id };
  }
}

/** A valid Event for the route about `contact`. */
function event(route: Route, f: Fixture, contact: Contact, fields: EventBody = {}): EventBody {
  return {
    ...identity(route, f, contact),
    eventName: 'Order Completed',
    occurredAt: new Date().toISOString(),
    dedupKey: `dk-${randomUUID()}`,
    ...fields,
  };
}

interface ExportedEvent {
  id: string;
  eventName: string;
  occurredAt: string;
  receivedAt: string;
  organizationExternalId: string | null;
  dedupKey: string | null;
  properties: Record<string, unknown> | null;
}

/** The Contact's export file through the ingress: its Contact line and its Event lines. */
async function exportOf(token: string, contactId: string) {
  const res = await call('GET', `/v1/contacts/by-id/${contactId}/export`, token);
  if (res.status !== 200) throw new Error(`export answered ${res.status}`);
  expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
  const lines = (await res.text())
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });
  expect(lines[0]).toMatchObject({ type: 'contact', data: { id: contactId } });
  expect(lines.slice(1).every((l) => l.type === 'event')).toBe(true);
  return lines.slice(1).map((l) => l.data as unknown as ExportedEvent);
}

const dedupKeysOf = (events: ExportedEvent[]) => events.map((e) => e.dedupKey).sort();

async function expectAccepted(res: Response, accepted: number) {
  expect(res.status).toBe(202);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.headers.get('x-request-id')).toBeTruthy();
  expect(await res.json()).toStrictEqual({ accepted });
}

async function eventNames(tenantId: string): Promise<Array<{ name: string; firstSeenAt: string }>> {
  const res = await admin('GET', `/tenants/${tenantId}/event-names`);
  if (res.status !== 200) throw new Error(`event-names answered ${res.status}`);
  return (await res.json()).eventNames;
}

let f: Fixture;

beforeAll(async () => {
  f = await newFixture('Events E2E');
});

describe('recording Events through the ingress', () => {
  it.each(ROUTES)(
    'when one Event is POSTed to %s, then 202 {accepted: 1} and the export holds it, occurredAt in UTC with milliseconds',
    async (route) => {
      const contact = await newContact(f);
      const body = event(route, f, contact, {
        eventName: 'Signed Up',
        occurredAt: '2026-03-01T12:00:00+02:00',
        properties: { plan: 'pro', seats: 3, nested: { ok: true } },
      });

      await expectAccepted(await record(f.token, route, body), 1);

      expect(await exportOf(f.token, contact.id)).toStrictEqual([
        {
          id: expect.stringMatching(UUID),
          eventName: 'Signed Up',
          occurredAt: '2026-03-01T10:00:00.000Z',
          receivedAt: expect.stringMatching(TIMESTAMP),
          organizationExternalId: route === 'by-organization' ? f.organization : null,
          dedupKey: body.dedupKey,
          properties: { plan: 'pro', seats: 3, nested: { ok: true } },
        },
      ]);
    },
  );

  it.each(ROUTES)(
    'when an array of 3 Events is POSTed to %s, then 202 {accepted: 3} and all three are recorded, optional fields absent as null',
    async (route) => {
      const contact = await newContact(f);
      const bodies = [
        event(route, f, contact, { eventName: 'Page Viewed' }),
        event(route, f, contact, { eventName: 'Page Viewed', properties: { path: '/' } }),
        { ...event(route, f, contact, { eventName: 'Cart Updated' }), dedupKey: undefined },
      ];

      await expectAccepted(await record(f.token, route, bodies), 3);

      const recorded = await exportOf(f.token, contact.id);
      expect(recorded).toHaveLength(3);
      expect(recorded.map((e) => e.eventName).sort()).toStrictEqual([
        'Cart Updated',
        'Page Viewed',
        'Page Viewed',
      ]);
      const withoutKey = recorded.find((e) => e.eventName === 'Cart Updated')!;
      expect(withoutKey).toMatchObject({ dedupKey: null, properties: null });
      expect(new Set(recorded.map((e) => e.id)).size).toBe(3);
    },
  );

  it.each(ROUTES.filter((r) => r !== 'by-organization'))(
    'when an Event POSTed to %s names an existing organization, then it is attributed to it',
    async (route) => {
      const contact = await newContact(f);

      await expectAccepted(
        await record(
          f.token,
          route,
          event(route, f, contact, { organizationExternalId: f.organization }),
        ),
        1,
      );

      expect(await exportOf(f.token, contact.id)).toStrictEqual([
        expect.objectContaining({ organizationExternalId: f.organization }),
      ]);
    },
  );

  it('when an organization Event has no acting Contact, then 202 and it is in no export', async () => {
    const contact = await newContact(f);

    await expectAccepted(
      await record(f.token, 'by-organization', {
        organizationExternalId: f.organization,
        eventName: 'Plan Changed',
        occurredAt: new Date().toISOString(),
      }),
      1,
    );

    expect(await exportOf(f.token, contact.id)).toStrictEqual([]);
  });

  it('when the email differs in case from the stored one, then by-email still finds the Contact', async () => {
    const contact = await newContact(f);

    await expectAccepted(
      await record(
        f.token,
        'by-email',
        event('by-email', f, contact, { contactEmail: contact.email.toUpperCase() }),
      ),
      1,
    );

    expect(await exportOf(f.token, contact.id)).toHaveLength(1);
  });

  it('when an array of 1,000 Events is POSTed, then 202 {accepted: 1000} and all are recorded', async () => {
    const contact = await newContact(f);
    const bodies = Array.from({ length: 1000 }, (_, i) =>
      event('by-contact-id', f, contact, { properties: { i } }),
    );

    await expectAccepted(await record(f.token, 'by-contact-id', bodies), 1000);

    expect(dedupKeysOf(await exportOf(f.token, contact.id))).toStrictEqual(
      bodies.map((b) => b.dedupKey).sort(),
    );
  });
});

describe('refused requests record nothing', () => {
  /** The field of the route's identity that, removed, makes an Event invalid. */
  const identityField: Record<Route, string> = {
    'by-contact-id': 'contactId',
    'by-external-id': 'contactExternalId',
    'by-email': 'contactEmail',
    'by-organization': 'organizationExternalId',
  };

  it.each(ROUTES)(
    'when the third Event of an array POSTed to %s has no occurredAt, then 400 validation_error naming index 2 and occurredAt, and nothing is recorded',
    async (route) => {
      const contact = await newContact(f);
      const bodies = [event(route, f, contact), event(route, f, contact), event(route, f, contact)];
      delete bodies[2]!.occurredAt;

      const error = await expectError(
        await record(f.token, route, bodies),
        400,
        'validation_error',
      );

      expect(error.message).toMatch(/(^|\D)2(\D|$)/);
      expect(error.message).toContain('occurredAt');
      expect(await exportOf(f.token, contact.id)).toStrictEqual([]);
      // No dedupKey was claimed: the fixed request records all three.
      bodies[2]!.occurredAt = new Date().toISOString();
      await expectAccepted(await record(f.token, route, bodies), 3);
      expect(await exportOf(f.token, contact.id)).toHaveLength(3);
    },
  );

  it.each(ROUTES)(
    "when the second Event of an array POSTed to %s lacks the route's identity field, then 400 naming index 1 and that field",
    async (route) => {
      const contact = await newContact(f);
      const bodies = [event(route, f, contact), event(route, f, contact)];
      delete bodies[1]![identityField[route]];

      const error = await expectError(
        await record(f.token, route, bodies),
        400,
        'validation_error',
      );

      expect(error.message).toMatch(/(^|\D)1(\D|$)/);
      expect(error.message).toContain(identityField[route]);
      expect(await exportOf(f.token, contact.id)).toStrictEqual([]);
    },
  );

  it.each(ROUTES)(
    'when one Event POSTed to %s has an occurredAt without an offset, then 400 naming occurredAt',
    async (route) => {
      const contact = await newContact(f);

      const error = await expectError(
        await record(
          f.token,
          route,
          event(route, f, contact, { occurredAt: '2026-03-01T12:00:00' }),
        ),
        400,
        'validation_error',
      );

      expect(error.message).toContain('occurredAt');
      expect(await exportOf(f.token, contact.id)).toStrictEqual([]);
    },
  );

  it.each([
    ['an empty array', () => [], undefined],
    [
      '1,001 Events',
      (c: Contact) => Array.from({ length: 1001 }, () => event('by-email', f, c)),
      undefined,
    ],
    [
      'February 30',
      (c: Contact) => event('by-email', f, c, { occurredAt: '2026-02-30T10:00:00Z' }),
      'occurredAt',
    ],
    [
      'an eventName of 256 characters',
      (c: Contact) => event('by-email', f, c, { eventName: 'e'.repeat(256) }),
      'eventName',
    ],
    ['an empty eventName', (c: Contact) => event('by-email', f, c, { eventName: '' }), 'eventName'],
    [
      'a dedupKey of 256 characters',
      (c: Contact) => event('by-email', f, c, { dedupKey: 'd'.repeat(256) }),
      'dedupKey',
    ],
    [
      'properties that are an array',
      (c: Contact) => event('by-email', f, c, { properties: [1] }),
      'properties',
    ],
    [
      'properties that are null',
      (c: Contact) => event('by-email', f, c, { properties: null }),
      'properties',
    ],
    [
      'properties over 32 KiB',
      (c: Contact) => event('by-email', f, c, { properties: { p: 'x'.repeat(33 * 1024) } }),
      'properties',
    ],
    [
      'U+0000 in a property',
      (c: Contact) => event('by-email', f, c, { properties: { p: 'a\u0000b' } }),
      'properties',
    ],
    [
      'a numeric eventName',
      (c: Contact) => event('by-email', f, c, { eventName: 42 }),
      'eventName',
    ],
    ['a string body', () => 'Order Completed', undefined],
    ['null', () => null, undefined],
  ])(
    'when the body is %s, then 400 validation_error and nothing is recorded',
    async (_, body, field) => {
      const contact = await newContact(f);

      const error = await expectError(
        await record(f.token, 'by-email', body(contact)),
        400,
        'validation_error',
      );

      if (field) expect(error.message).toContain(field);
      expect(await exportOf(f.token, contact.id)).toStrictEqual([]);
    },
  );

  it('when the Content-Type is missing or not JSON, or the JSON is broken, then 400 validation_error', async () => {
    const contact = await newContact(f);
    const json = JSON.stringify(event('by-email', f, contact));

    for (const [contentType, body] of [
      [undefined, json],
      ['text/plain', json],
      ['application/json', json.slice(0, -3)],
    ] as const) {
      const res = await call('POST', '/v1/events/by-email', f.token, undefined, {
        headers: contentType ? { 'content-type': contentType } : {},
        body: Buffer.from(body),
      });
      await expectError(res, 400, 'validation_error');
    }
    expect(await exportOf(f.token, contact.id)).toStrictEqual([]);
  });

  it.each(ROUTES)(
    'when the body POSTed to %s is over 1 MiB, then 413 payload_too_large and nothing is recorded',
    async (route) => {
      const contact = await newContact(f);
      // 40 valid Events of about 30 KiB each: every Event within the limits, the body over 1 MiB.
      const bodies = Array.from({ length: 40 }, () =>
        event(route, f, contact, { properties: { padding: 'x'.repeat(30 * 1024) } }),
      );

      await expectError(await record(f.token, route, bodies), 413, 'payload_too_large');

      expect(await exportOf(f.token, contact.id)).toStrictEqual([]);
    },
  );

  /** Per route: a batch with two unresolvable Events (1 and 3), and what the 422 lists for them. */
  const unresolvable: Record<
    Route,
    (contact: Contact) => { bad: [EventBody, EventBody]; items: [EventBody, EventBody] }
  > = {
    'by-contact-id': (contact) => {
      const unknown = randomUUID();
      return {
        bad: [
          { contactId: unknown },
          { contactId: contact.id, organizationExternalId: 'no-such-org' },
        ],
        items: [
          {
            contactId: unknown,
            contactExternalId: null,
            contactEmail: null,
            organizationExternalId: null,
          },
          {
            contactId: contact.id,
            contactExternalId: null,
            contactEmail: null,
            organizationExternalId: 'no-such-org',
          },
        ],
      };
    },
    'by-external-id': (contact) => ({
      bad: [
        { contactExternalId: 'nobody' },
        { contactExternalId: contact.externalId, organizationExternalId: 'no-such-org' },
      ],
      items: [
        {
          contactId: null,
          contactExternalId: 'nobody',
          contactEmail: null,
          organizationExternalId: null,
        },
        {
          contactId: null,
          contactExternalId: contact.externalId,
          contactEmail: null,
          organizationExternalId: 'no-such-org',
        },
      ],
    }),
    'by-email': (contact) => ({
      bad: [
        { contactEmail: 'nobody@example.com' },
        { contactEmail: contact.email, organizationExternalId: 'no-such-org' },
      ],
      items: [
        {
          contactId: null,
          contactExternalId: null,
          contactEmail: 'nobody@example.com',
          organizationExternalId: null,
        },
        {
          contactId: null,
          contactExternalId: null,
          contactEmail: contact.email,
          organizationExternalId: 'no-such-org',
        },
      ],
    }),
    'by-organization': () => {
      const unknown = randomUUID();
      return {
        bad: [
          { organizationExternalId: 'no-such-org' },
          { organizationExternalId: f.organization, contactId: unknown },
        ],
        items: [
          {
            contactId: null,
            contactExternalId: null,
            contactEmail: null,
            organizationExternalId: 'no-such-org',
          },
          {
            contactId: unknown,
            contactExternalId: null,
            contactEmail: null,
            organizationExternalId: f.organization,
          },
        ],
      };
    },
  };

  it.each(ROUTES)(
    'when Events 1 and 3 of 4 POSTed to %s name no existing Contact or organization, then 422 listing both in request order with all six fields, nothing recorded, and the fixed batch with the same dedupKeys records all four',
    async (route) => {
      const contact = await newContact(f);
      const { bad, items } = unresolvable[route](contact);
      const names = [0, 1, 2, 3].map((i) => `Unresolved ${i} ${randomUUID()}`);
      const good = names.map((eventName) => event(route, f, contact, { eventName }));
      const batch = good.map((e, i) =>
        i === 1 || i === 3
          ? {
              eventName: e.eventName,
              occurredAt: e.occurredAt,
              dedupKey: e.dedupKey,
              ...bad[i === 1 ? 0 : 1],
            }
          : e,
      );

      const res = await record(f.token, route, batch);

      expect(res.status).toBe(422);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toStrictEqual({
        code: 'unresolved_identity',
        message: expect.any(String),
        unresolved: [
          { index: 1, eventName: names[1], ...items[0] },
          { index: 3, eventName: names[3], ...items[1] },
        ],
      });
      expect(await exportOf(f.token, contact.id)).toStrictEqual([]);
      const cataloged = (await eventNames(f.tenantId)).map((n) => n.name);
      for (const name of names) expect(cataloged).not.toContain(name);

      await expectAccepted(await record(f.token, route, good), 4);
      expect(dedupKeysOf(await exportOf(f.token, contact.id))).toStrictEqual(
        good.map((e) => e.dedupKey).sort(),
      );
    },
  );

  it('when the contactId is not a uuid, then 422 listing it: an id that cannot exist names no Contact', async () => {
    const res = await record(f.token, 'by-contact-id', {
      contactId: 'not-a-uuid',
      eventName: 'Odd Id',
      occurredAt: new Date().toISOString(),
    });

    expect(res.status).toBe(422);
    expect((await res.json()).unresolved).toStrictEqual([
      {
        index: 0,
        eventName: 'Odd Id',
        contactId: 'not-a-uuid',
        contactExternalId: null,
        contactEmail: null,
        organizationExternalId: null,
      },
    ]);
  });

  it('when a Contact of another tenant is named, then 422: tenants do not see each other', async () => {
    const other = await newFixture('Events E2E other');
    const stranger = await newContact(other);

    for (const route of ROUTES.filter((r) => r !== 'by-organization')) {
      const res = await record(f.token, route, event(route, other, stranger));
      expect(res.status).toBe(422);
    }
    const orgEvent = await record(f.token, 'by-organization', {
      organizationExternalId: other.organization,
      eventName: 'Foreign',
      occurredAt: new Date().toISOString(),
    });
    expect(orgEvent.status).toBe(422);
    expect(await exportOf(other.token, stranger.id)).toStrictEqual([]);
  });

  it.each(ROUTES)(
    'when the key lacks events:write, then %s answers 403 "missing scope events:write" and nothing is recorded',
    async (route) => {
      const contact = await newContact(f);
      const noEvents = await accessToken(f.tenantId, [
        'contacts:write',
        'contacts:read',
        'contacts:export',
        'contacts:erase',
      ]);

      const error = await expectError(
        await record(noEvents, route, event(route, f, contact)),
        403,
        'insufficient_scope',
      );

      expect(error.message).toBe('missing scope events:write');
      expect(await exportOf(f.token, contact.id)).toStrictEqual([]);
    },
  );

  it.each(ROUTES)(
    'when there is no token or a bad one, then %s answers 401 unauthenticated and nothing is recorded',
    async (route) => {
      const contact = await newContact(f);

      for (const bad of [undefined, 'not-a-token', `${f.token.slice(0, -4)}AAAA`]) {
        const res = await record(bad, route, event(route, f, contact));
        await expectError(res, 401, 'unauthenticated');
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
      }
      expect(await exportOf(f.token, contact.id)).toStrictEqual([]);
    },
  );

  it('when a route is called with GET, then 405 method_not_allowed with Allow POST; an unknown Event route is 404', async () => {
    for (const route of ROUTES) {
      const res = await call('GET', `/v1/events/${route}`, f.token);
      await expectError(res, 405, 'method_not_allowed');
      expect(res.headers.get('allow')).toBe('POST');
    }
    await expectError(await call('POST', '/v1/events/by-phone', f.token, {}), 404, 'not_found');
  });
});

describe('a publishable key in a browser', () => {
  let publishable: string;
  let lookups: string;

  const tokenOf = async (body: Record<string, unknown>) => {
    const key = await newKey(f.tenantId, { kind: 'publishable', ...body });
    const res = await exchange(basic(key.clientId, ''));
    expect(res.status).toBe(200);
    return (await res.json<{ accessToken: string }>()).accessToken;
  };

  beforeAll(async () => {
    publishable = await tokenOf({});
    lookups = await tokenOf({ identifierLookup: true });
  });

  it('when a publishable key records an Event by contactId, then 202 with Access-Control-Allow-Origin *', async () => {
    const contact = await newContact(f);

    const res = await record(publishable, 'by-contact-id', event('by-contact-id', f, contact));

    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    await expectAccepted(res, 1);
    expect(await exportOf(f.token, contact.id)).toHaveLength(1);
  });

  it.each(['by-external-id', 'by-email', 'by-organization'] as const)(
    'when a publishable key without identifierLookup sends 1,000 candidates to %s, then one Contact among them or none gets the same 403 and nothing is recorded',
    async (route) => {
      const contact = await newContact(f);
      const candidates = (known: boolean) =>
        Array.from({ length: 1_000 }, (_, i) => {
          const stranger: Contact = {
            id: randomUUID(),
            externalId: `stranger-${randomUUID()}`,
            email: `stranger-${randomUUID()}@example.com`,
          };
          return event(route, f, known && i === 500 ? contact : stranger);
        });

      const answers = [];
      for (const known of [true, false]) {
        const res = await record(publishable, route, candidates(known));
        answers.push({
          status: res.status,
          body: await res.json(),
          cors: res.headers.get('access-control-allow-origin'),
        });
      }

      expect(answers[0]).toStrictEqual(answers[1]);
      expect(answers[0]).toStrictEqual({
        status: 403,
        body: { code: 'forbidden', message: expect.stringContaining('by contactId only') },
        cors: '*',
      });
      expect(await exportOf(f.token, contact.id)).toHaveLength(0);
    },
  );

  it('when a publishable key without identifierLookup names an organization on by-contact-id, then an existing and an unknown one get the same 403', async () => {
    const contact = await newContact(f);
    const answers = [];
    for (const organizationExternalId of [f.organization, `org-${randomUUID()}`]) {
      const res = await record(
        publishable,
        'by-contact-id',
        event('by-contact-id', f, contact, { organizationExternalId }),
      );
      answers.push({ status: res.status, body: await res.json() });
    }
    expect(answers[0]).toStrictEqual(answers[1]);
    expect(answers[0]!.status).toBe(403);
    expect(await exportOf(f.token, contact.id)).toHaveLength(0);
  });

  it.each(ROUTES)(
    'when a publishable key created with identifierLookup records an Event with %s, then 202',
    async (route) => {
      const contact = await newContact(f);
      await expectAccepted(await record(lookups, route, event(route, f, contact)), 1);
      expect(await exportOf(f.token, contact.id)).toHaveLength(1);
    },
  );

  it('when a publishable key has allowed Origins, then it records from them and gets 403 from any other Origin or none', async () => {
    const token = await tokenOf({ allowedOrigins: ['https://shop.example.com'] });
    const contact = await newContact(f);
    const from = (origin?: string) =>
      fetch(`${INGRESS}/v1/events/by-contact-id`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          ...(origin ? { origin } : {}),
        },
        body: JSON.stringify(event('by-contact-id', f, contact)),
      });

    for (const res of [await from('https://evil.example.com'), await from()]) {
      expect(res.status).toBe(403);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(await res.json()).toMatchObject({ code: 'forbidden' });
    }
    await expectAccepted(await from('https://shop.example.com'), 1);
    expect(await exportOf(f.token, contact.id)).toHaveLength(1);
  });

  it.each(ROUTES)(
    'when a browser sends a CORS preflight to %s, then it is allowed with Authorization and Content-Type',
    async (route) => {
      const res = await fetch(`${INGRESS}/v1/events/${route}`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://shop.example.com',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type',
        },
      });

      expect(res.status).toBeLessThan(300);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-methods')).toMatch(/POST/);
      expect(res.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
      expect(res.headers.get('access-control-allow-headers')).toMatch(/Content-Type/);
    },
  );

  it('when a publishable key gets an error answer (400, 401, 422), then it carries Access-Control-Allow-Origin * too', async () => {
    const answers = [
      await record(publishable, 'by-contact-id', { eventName: 'No Identity' }),
      await record(undefined, 'by-contact-id', { eventName: 'No Token' }),
      await record(publishable, 'by-contact-id', {
        contactId: randomUUID(),
        eventName: 'Unknown',
        occurredAt: new Date().toISOString(),
      }),
    ];

    expect(answers.map((r) => r.status)).toStrictEqual([400, 401, 422]);
    for (const res of answers) expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('dedup', () => {
  it('when one dedupKey is sent through all four routes, then each answers 202 {accepted: 1} and the first Event alone is recorded', async () => {
    const contact = await newContact(f);
    const dedupKey = `across-${randomUUID()}`;

    for (const route of ROUTES) {
      await expectAccepted(
        await record(
          f.token,
          route,
          event(route, f, contact, { dedupKey, eventName: `Via ${route}` }),
        ),
        1,
      );
    }

    expect(await exportOf(f.token, contact.id)).toStrictEqual([
      expect.objectContaining({ dedupKey, eventName: 'Via by-contact-id' }),
    ]);
  });

  it('when an array repeats a dedupKey, then accepted counts every Event and each unique key is recorded once', async () => {
    const contact = await newContact(f);
    const repeated = `inside-${randomUUID()}`;
    const other = `other-${randomUUID()}`;
    const bodies = [repeated, other, repeated, repeated].map((dedupKey) =>
      event('by-external-id', f, contact, { dedupKey }),
    );

    await expectAccepted(await record(f.token, 'by-external-id', bodies), 4);

    expect(dedupKeysOf(await exportOf(f.token, contact.id))).toStrictEqual(
      [repeated, other].sort(),
    );
  });

  it('when a request repeats keys already recorded beside new ones, then only the new ones are recorded', async () => {
    const contact = await newContact(f);
    const first = [event('by-email', f, contact), event('by-email', f, contact)];
    await expectAccepted(await record(f.token, 'by-email', first), 2);
    const second = [...first, event('by-email', f, contact)];

    await expectAccepted(await record(f.token, 'by-email', second), 3);

    expect(dedupKeysOf(await exportOf(f.token, contact.id))).toStrictEqual(
      second.map((e) => e.dedupKey).sort(),
    );
  });

  it('when 20 requests with one dedupKey race through the ingress, then all answer 202 and one Event is recorded', async () => {
    const contact = await newContact(f);
    const dedupKey = `race-${randomUUID()}`;

    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        const route = ROUTES[i % ROUTES.length]!;
        return record(f.token, route, event(route, f, contact, { dedupKey }));
      }),
    );

    expect(answers.map((r) => r.status)).toStrictEqual(Array(20).fill(202));
    expect(dedupKeysOf(await exportOf(f.token, contact.id))).toStrictEqual([dedupKey]);
  });

  it('when the same dedupKey is used in another tenant, then it is recorded there too', async () => {
    const other = await newFixture('Events E2E dedup other');
    const mine = await newContact(f);
    const theirs = await newContact(other);
    const dedupKey = `shared-${randomUUID()}`;

    await expectAccepted(
      await record(f.token, 'by-contact-id', event('by-contact-id', f, mine, { dedupKey })),
      1,
    );
    await expectAccepted(
      await record(
        other.token,
        'by-contact-id',
        event('by-contact-id', other, theirs, { dedupKey }),
      ),
      1,
    );

    expect(dedupKeysOf(await exportOf(f.token, mine.id))).toStrictEqual([dedupKey]);
    expect(dedupKeysOf(await exportOf(other.token, theirs.id))).toStrictEqual([dedupKey]);
  });

  it('when Events carry no dedupKey, then each one is recorded', async () => {
    const contact = await newContact(f);
    const body = { ...event('by-contact-id', f, contact), dedupKey: undefined };

    await expectAccepted(await record(f.token, 'by-contact-id', [body, body]), 2);
    await expectAccepted(await record(f.token, 'by-contact-id', body), 1);

    expect(await exportOf(f.token, contact.id)).toHaveLength(3);
  });
});

describe('the event-name catalog', () => {
  it('when names are recorded, then the operator API lists each once with its first-seen time, and a refused request adds nothing', async () => {
    const own = await newFixture('Events E2E catalog');
    const contact = await newContact(own);
    expect(await eventNames(own.tenantId)).toStrictEqual([]);
    const before = Date.now();

    await expectAccepted(
      await record(own.token, 'by-contact-id', [
        event('by-contact-id', own, contact, { eventName: 'Signed Up' }),
        event('by-contact-id', own, contact, { eventName: 'Signed Up' }),
      ]),
      2,
    );
    await expectAccepted(
      await record(own.token, 'by-organization', {
        organizationExternalId: own.organization,
        eventName: 'Plan Changed',
        occurredAt: new Date().toISOString(),
      }),
      1,
    );
    const first = await eventNames(own.tenantId);
    await expectAccepted(
      await record(
        own.token,
        'by-email',
        event('by-email', own, contact, { eventName: 'Signed Up' }),
      ),
      1,
    );
    const refused = await record(own.token, 'by-email', [
      event('by-email', own, contact, { eventName: 'Never Seen' }),
      {
        contactEmail: 'nobody@example.com',
        eventName: 'Never Seen Either',
        occurredAt: new Date().toISOString(),
      },
    ]);
    expect(refused.status).toBe(422);
    const invalid = await record(own.token, 'by-email', [
      event('by-email', own, contact, { eventName: 'Never Valid' }),
      { eventName: 'Never Valid Either' },
    ]);
    expect(invalid.status).toBe(400);

    const names = await eventNames(own.tenantId);
    const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
    expect([...names].sort(byName)).toStrictEqual([
      { name: 'Plan Changed', firstSeenAt: expect.stringMatching(TIMESTAMP) },
      { name: 'Signed Up', firstSeenAt: expect.stringMatching(TIMESTAMP) },
    ]);
    expect([...names].sort(byName)).toStrictEqual([...first].sort(byName)); // firstSeenAt kept
    for (const n of names) {
      expect(Date.parse(n.firstSeenAt)).toBeGreaterThanOrEqual(before - 5_000);
      expect(Date.parse(n.firstSeenAt)).toBeLessThanOrEqual(Date.now() + 5_000);
    }
  });

  it('when the catalog of an unknown tenant or with a wrong admin token is asked for, then 404 and 401', async () => {
    await expectError(await admin('GET', `/tenants/${randomUUID()}/event-names`), 404, 'not_found');
    await expectError(
      await admin('GET', `/tenants/${f.tenantId}/event-names`, undefined, 'wrong-token'),
      401,
      'unauthenticated',
    );
  });

  it('when an operator runs `npm run -s admin -- event-names list --tenant T`, then it prints the catalog', async () => {
    const own = await newFixture('Events E2E catalog CLI');
    const contact = await newContact(own);
    await expectAccepted(
      await record(
        own.token,
        'by-external-id',
        event('by-external-id', own, contact, { eventName: 'Trial Started' }),
      ),
      1,
    );

    const listed = await runCommand('npm', [
      'run',
      '-s',
      'admin',
      '--',
      'event-names',
      'list',
      '--tenant',
      own.tenantId,
    ]);
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(listed.stdout)).toStrictEqual({
      eventNames: [{ name: 'Trial Started', firstSeenAt: expect.stringMatching(TIMESTAMP) }],
    });

    const one = await runCommand('npm', [
      'run',
      '-s',
      'admin',
      '--',
      'event-names',
      'list',
      '--tenant',
      own.tenantId,
      '--get',
      'eventNames.0.name',
    ]);
    expect(one).toMatchObject({ code: 0, stdout: 'Trial Started\n' });
  });
});

describe('published to Kafka', () => {
  let own: Fixture;
  let watch: TenantWatch | undefined;

  beforeAll(async () => {
    own = await newFixture('Events E2E Kafka');
    watch = await watchTenant(TOPICS.eventsRecorded, own.tenantId, {
      clientId: 'e2e-watch',
      groupPrefix: 'e2e',
    });
  });

  afterAll(async () => {
    await watch?.stop();
  });

  it('when Events are recorded through every route, then each is published once on herald.events.recorded, keyed by Contact or organization, ids matching the export', async () => {
    const contact = await newContact(own);
    const sent: Array<{ route: Route; body: EventBody }> = [
      { route: 'by-contact-id', body: event('by-contact-id', own, contact, { eventName: 'A' }) },
      {
        route: 'by-external-id',
        body: event('by-external-id', own, contact, {
          eventName: 'B',
          organizationExternalId: own.organization,
        }),
      },
      {
        route: 'by-email',
        body: event('by-email', own, contact, { eventName: 'C', properties: { n: 1 } }),
      },
      {
        route: 'by-organization',
        body: event('by-organization', own, contact, { eventName: 'D' }),
      },
      {
        route: 'by-organization',
        body: {
          organizationExternalId: own.organization,
          eventName: 'E',
          occurredAt: '2026-01-02T03:04:05.678+01:00',
        },
      },
    ];
    for (const { route, body } of sent)
      await expectAccepted(await record(own.token, route, body), 1);
    // A repeat of A's dedupKey is not recorded, so not published.
    await expectAccepted(
      await record(
        own.token,
        'by-email',
        event('by-email', own, contact, { dedupKey: sent[0]!.body.dedupKey }),
      ),
      1,
    );

    const messages = await watch!.waitForCount(5);
    await new Promise((resolve) => setTimeout(resolve, 2_000)); // room for a wrong sixth
    expect(watch!.received).toHaveLength(5);

    const exported = await exportOf(own.token, contact.id);
    const byName = new Map(messages.map((m) => [m.value.eventName as string, m]));
    const contactKey = `${own.tenantId}:contact:${contact.id}`;
    const orgKey = `${own.tenantId}:organization:${own.organization}`;
    expect([...byName.keys()].sort()).toStrictEqual(['A', 'B', 'C', 'D', 'E']);
    expect(Object.fromEntries([...byName].map(([n, m]) => [n, m.key]))).toStrictEqual({
      A: contactKey,
      B: contactKey,
      C: contactKey,
      D: orgKey,
      E: orgKey,
    });
    for (const [i, { body }] of sent.entries()) {
      const eventName = body.eventName as string;
      const m = byName.get(eventName)!;
      expect(() => eventRecordedMessage.parse(m.value)).not.toThrow();
      const recorded = exported.find((e) => e.eventName === eventName);
      expect(m.value).toStrictEqual({
        version: 1,
        type: 'event.recorded',
        messageId: m.value.eventId,
        tenantId: own.tenantId,
        eventId: recorded?.id ?? expect.stringMatching(UUID),
        contactId: i === 4 ? null : contact.id,
        organizationExternalId: i === 0 || i === 2 ? null : own.organization,
        eventName,
        occurredAt:
          i === 4 ? '2026-01-02T02:04:05.678Z' : new Date(body.occurredAt as string).toISOString(),
        receivedAt: recorded?.receivedAt ?? expect.stringMatching(TIMESTAMP),
        dedupKey: 'dedupKey' in body ? body.dedupKey : null,
        properties: 'properties' in body ? body.properties : null,
      });
    }
    expect(exported.map((e) => e.eventName).sort()).toStrictEqual(['A', 'B', 'C', 'D']);
  });

  it("when one Contact's Events are recorded one after another, then they are published in that order in one partition", async () => {
    const contact = await newContact(own);
    const start = watch!.received.length;
    const names = Array.from({ length: 10 }, (_, i) => `Step ${i}`);

    for (const eventName of names) {
      const route = ROUTES[names.indexOf(eventName) % 3]!;
      await expectAccepted(
        await record(own.token, route, event(route, own, contact, { eventName })),
        1,
      );
    }

    await watch!.waitForCount(start + names.length);
    const mine = watch!.received.slice(start).filter((m) => m.value.contactId === contact.id);
    expect(mine.map((m) => m.value.eventName)).toStrictEqual(names);
    expect(new Set(mine.map((m) => m.partition)).size).toBe(1);
    const offsets = mine.map((m) => m.offset);
    expect([...offsets].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toStrictEqual(offsets);
  });
});

describe('export and erasure of a Contact with Events', () => {
  it('when a Contact with Events is exported, erased, and re-created by the same externalId, then the export streamed them, erasure leaves 404s and 422s, and the new Contact has no old Events', async () => {
    const own = await newFixture('Events E2E erasure');
    const contact = await newContact(own, 'erased');
    const other = await newContact(own, 'kept');
    await expectAccepted(
      await record(own.token, 'by-external-id', [
        event('by-external-id', own, contact, { eventName: 'Viewed', properties: { sku: 'A-1' } }),
        event('by-external-id', own, contact, {
          eventName: 'Bought',
          organizationExternalId: own.organization,
        }),
        event('by-external-id', own, other, { eventName: 'Viewed' }),
      ]),
      3,
    );
    await expectAccepted(
      await record(
        own.token,
        'by-organization',
        event('by-organization', own, contact, { eventName: 'Seat Used' }),
      ),
      1,
    );

    const exported = await call('GET', `/v1/contacts/${contact.externalId}/export`, own.token);
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const lines = (await exported.text())
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines[0]).toStrictEqual({
      type: 'contact',
      data: expect.objectContaining({
        id: contact.id,
        externalId: contact.externalId,
        email: contact.email,
      }),
    });
    expect(
      lines
        .slice(1)
        .map((l) => [l.type, l.data.eventName])
        .sort(),
    ).toStrictEqual([
      ['event', 'Bought'],
      ['event', 'Seat Used'],
      ['event', 'Viewed'],
    ]);
    for (const l of lines.slice(1)) {
      expect(Object.keys(l.data).sort()).toStrictEqual([
        'dedupKey',
        'eventName',
        'id',
        'occurredAt',
        'organizationExternalId',
        'properties',
        'receivedAt',
      ]);
    }

    const erased = await call('POST', `/v1/contacts/${contact.externalId}/erase`, own.token);
    expect(erased.status).toBe(204);

    await expectError(
      await call('GET', `/v1/contacts/by-id/${contact.id}/export`, own.token),
      404,
      'not_found',
    );
    await expectError(
      await call('GET', `/v1/contacts/${contact.externalId}/export`, own.token),
      404,
      'not_found',
    );
    expect((await call('POST', `/v1/contacts/by-id/${contact.id}/erase`, own.token)).status).toBe(
      204,
    );
    for (const route of ['by-contact-id', 'by-external-id', 'by-email'] as const) {
      expect((await record(own.token, route, event(route, own, contact))).status).toBe(422);
    }
    expect(
      (await record(own.token, 'by-organization', event('by-organization', own, contact))).status,
    ).toBe(422);
    expect(await exportOf(own.token, other.id)).toStrictEqual([
      expect.objectContaining({ eventName: 'Viewed' }),
    ]);

    const again = await call('PUT', `/v1/contacts/${contact.externalId}`, own.token, {
      email: contact.email,
    });
    expect(again.status).toBe(201);
    const recreated = await again.json<Contact>();
    expect(recreated.id).not.toBe(contact.id);
    expect(await exportOf(own.token, recreated.id)).toStrictEqual([]);
    await expectAccepted(await record(own.token, 'by-email', event('by-email', own, recreated)), 1);
    expect(await exportOf(own.token, recreated.id)).toHaveLength(1);
  });
});
