// The four Event routes on success (formats, `accepted`, CORS): the answer, what is
// stored, the outbox message of each recorded Event, CORS, and the edge statuses (401, 403,
// 405, 413, Content-Type).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventRecordedMessage, TOPICS } from '@herald/messages';
import { contactLockKey } from '../../src/export-erasure/data/erasure-fence.js';
import {
  startEventsService,
  storedState,
  TIMESTAMP,
  uniqueEmail,
  UUID,
  type TestEventsService,
} from '../support.js';

let svc: TestEventsService;
beforeAll(async () => {
  svc = await startEventsService();
});
afterAll(() => svc.close());

const OCCURRED = '2026-03-04T05:06:07.123Z';

async function tenantWithContact(externalId = 'user-1', email = uniqueEmail()) {
  const tenant = svc.newTenant();
  const contact = await svc.contacts.createContact(tenant.tenantId, { externalId, email });
  return { ...tenant, contact, email };
}

describe('POST /v1/events/by-contact-id', () => {
  it('when one Event object names an existing Contact, then 202 {accepted: 1} and the Event is stored', async () => {
    const { tenantId, token, contact } = await tenantWithContact();

    const res = await svc.record('by-contact-id', token, {
      contactId: contact.id,
      eventName: 'signed_up',
      occurredAt: OCCURRED,
    });

    expect(res.status).toBe(202);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toStrictEqual({ accepted: 1 });
    const { events } = await storedState(svc.pool, tenantId);
    expect(events).toEqual([
      {
        id: expect.stringMatching(UUID),
        contact_id: contact.id,
        organization_external_id: null,
        event_name: 'signed_up',
        occurred_at: new Date(OCCURRED),
        received_at: expect.any(Date),
        dedup_key: null,
        properties: null,
      },
    ]);
    expect(Date.now() - events[0]!.received_at.getTime()).toBeLessThan(10_000);
  });

  it('when an array names several Contacts, then 202 with the number of Event objects and every one stored', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    const other = await svc.contacts.createContact(tenantId, { externalId: 'user-2' });

    const res = await svc.record('by-contact-id', token, [
      { contactId: contact.id, eventName: 'a', occurredAt: OCCURRED },
      { contactId: other.id, eventName: 'b', occurredAt: OCCURRED },
      { contactId: contact.id, eventName: 'c', occurredAt: OCCURRED },
    ]);

    expect(res.status).toBe(202);
    expect(await res.json()).toStrictEqual({ accepted: 3 });
    const { events } = await storedState(svc.pool, tenantId);
    expect(events.map((e) => [e.contact_id, e.event_name]).sort()).toEqual(
      [
        [contact.id, 'a'],
        [other.id, 'b'],
        [contact.id, 'c'],
      ].sort(),
    );
  });

  it('when the contactId is sent in upper case, then it names the same Contact', async () => {
    const { tenantId, token, contact } = await tenantWithContact();

    const res = await svc.record('by-contact-id', token, {
      contactId: contact.id.toUpperCase(),
      eventName: 'x',
      occurredAt: OCCURRED,
    });

    expect(res.status).toBe(202);
    expect((await storedState(svc.pool, tenantId)).events[0]!.contact_id).toBe(contact.id);
  });

  it('when an array of 1,000 Events is sent, then all 1,000 are stored', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    const events = Array.from({ length: 1000 }, (_, i) => ({
      contactId: contact.id,
      eventName: `e${i % 7}`,
      occurredAt: OCCURRED,
      dedupKey: `k-${i}`,
      properties: { i },
    }));

    const res = await svc.record('by-contact-id', token, events);

    expect(res.status).toBe(202);
    expect(await res.json()).toStrictEqual({ accepted: 1000 });
    const stored = await storedState(svc.pool, tenantId);
    expect(stored.events).toHaveLength(1000);
    expect(stored.claims).toHaveLength(1000);
    expect(stored.outbox).toHaveLength(1000);
  });
});

describe('POST /v1/events/by-external-id', () => {
  it('when one Event names a Contact by its externalId, then it is stored against that Contact', async () => {
    const { tenantId, token, contact } = await tenantWithContact('crm/42');

    const res = await svc.record('by-external-id', token, {
      contactExternalId: 'crm/42',
      eventName: 'viewed',
      occurredAt: OCCURRED,
    });

    expect(res.status).toBe(202);
    expect(await res.json()).toStrictEqual({ accepted: 1 });
    const { events } = await storedState(svc.pool, tenantId);
    expect(events).toMatchObject([{ contact_id: contact.id, event_name: 'viewed' }]);
  });

  it('when an array names two Contacts by externalId, then both are stored', async () => {
    const { tenantId, token, contact } = await tenantWithContact('a');
    const other = await svc.contacts.createContact(tenantId, { externalId: 'b' });

    const res = await svc.record('by-external-id', token, [
      { contactExternalId: 'a', eventName: 'x', occurredAt: OCCURRED },
      { contactExternalId: 'b', eventName: 'x', occurredAt: OCCURRED },
    ]);

    expect(await res.json()).toStrictEqual({ accepted: 2 });
    const { events } = await storedState(svc.pool, tenantId);
    expect(events.map((e) => e.contact_id).sort()).toEqual([contact.id, other.id].sort());
  });
});

describe('POST /v1/events/by-email', () => {
  it('when the email differs only in case, then it names the Contact (emails match case-insensitively)', async () => {
    const email = uniqueEmail('Ada');
    const { tenantId, token, contact } = await tenantWithContact('ada', email);

    const res = await svc.record('by-email', token, [
      { contactEmail: email.toUpperCase(), eventName: 'opened', occurredAt: OCCURRED },
      { contactEmail: email, eventName: 'clicked', occurredAt: OCCURRED },
    ]);

    expect(res.status).toBe(202);
    expect(await res.json()).toStrictEqual({ accepted: 2 });
    const { events } = await storedState(svc.pool, tenantId);
    expect(events.map((e) => e.contact_id)).toEqual([contact.id, contact.id]);
  });

  it('when the Contact was created by email alone, then Events by email reach it', async () => {
    const { tenantId, token } = svc.newTenant();
    const email = uniqueEmail();
    const contact = await svc.contacts.createContact(tenantId, { email });

    const res = await svc.record('by-email', token, {
      contactEmail: email,
      eventName: 'x',
      occurredAt: OCCURRED,
    });

    expect(res.status).toBe(202);
    expect((await storedState(svc.pool, tenantId)).events[0]!.contact_id).toBe(contact.id);
  });
});

describe('POST /v1/events/by-organization', () => {
  it('when the organization exists, then the Event is stored for it without a Contact', async () => {
    const { tenantId, token } = svc.newTenant();
    await svc.contacts.createOrganization(tenantId, 'acme');

    const res = await svc.record('by-organization', token, {
      organizationExternalId: 'acme',
      eventName: 'plan_upgraded',
      occurredAt: OCCURRED,
    });

    expect(res.status).toBe(202);
    expect(await res.json()).toStrictEqual({ accepted: 1 });
    const { events, outbox } = await storedState(svc.pool, tenantId);
    expect(events).toMatchObject([
      { contact_id: null, organization_external_id: 'acme', event_name: 'plan_upgraded' },
    ]);
    expect(outbox).toMatchObject([{ key: `${tenantId}:organization:acme`, subject_id: null }]);
  });

  it('when it names the acting Contact, then the Event is stored with both', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    await svc.contacts.createOrganization(tenantId, 'acme');

    const res = await svc.record('by-organization', token, [
      {
        organizationExternalId: 'acme',
        contactId: contact.id,
        eventName: 'a',
        occurredAt: OCCURRED,
      },
      { organizationExternalId: 'acme', eventName: 'b', occurredAt: OCCURRED },
    ]);

    expect(await res.json()).toStrictEqual({ accepted: 2 });
    const { events, outbox } = await storedState(svc.pool, tenantId);
    expect(events.map((e) => [e.event_name, e.contact_id, e.organization_external_id])).toEqual(
      expect.arrayContaining([
        ['a', contact.id, 'acme'],
        ['b', null, 'acme'],
      ]),
    );
    // Keyed by the organization either way: its Events stay in order in one partition.
    expect(outbox.map((m) => m.key)).toEqual([
      `${tenantId}:organization:acme`,
      `${tenantId}:organization:acme`,
    ]);
  });

  it('when its id, name and dedupKey hold what an array literal quotes (NULL, braces, commas, quotes, backslashes, spaces), then each is stored and keyed exactly', async () => {
    const { tenantId, token } = svc.newTenant();
    const org = ' {o,"r"}\\g NULL ';
    await svc.contacts.createOrganization(tenantId, org);

    const res = await svc.record('by-organization', token, [
      { organizationExternalId: org, eventName: 'NULL', dedupKey: 'NULL', occurredAt: OCCURRED },
      { organizationExternalId: org, eventName: '{}', dedupKey: '"', occurredAt: OCCURRED },
    ]);

    expect(await res.json()).toStrictEqual({ accepted: 2 });
    const { events, outbox } = await storedState(svc.pool, tenantId);
    expect(events.map((e) => [e.organization_external_id, e.event_name, e.dedup_key])).toEqual(
      expect.arrayContaining([
        [org, 'NULL', 'NULL'],
        [org, '{}', '"'],
      ]),
    );
    expect(outbox.map((m) => m.key)).toEqual([
      `${tenantId}:organization:${org}`,
      `${tenantId}:organization:${org}`,
    ]);
  });
});

describe('what every route stores', () => {
  it('when a Contact Event names an existing organization, then it is attributed to it', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    await svc.contacts.createOrganization(tenantId, 'org-1');

    const res = await svc.record('by-contact-id', token, {
      contactId: contact.id,
      organizationExternalId: 'org-1',
      eventName: 'x',
      occurredAt: OCCURRED,
    });

    expect(res.status).toBe(202);
    const { events, outbox } = await storedState(svc.pool, tenantId);
    expect(events[0]!).toMatchObject({ contact_id: contact.id, organization_external_id: 'org-1' });
    // A Contact Event stays keyed by its Contact.
    expect(outbox[0]!.key).toBe(`${tenantId}:contact:${contact.id}`);
  });

  it.each([
    ['2026-03-04T07:06:07.123+02:00', '2026-03-04T05:06:07.123Z'],
    ['2026-03-04T05:06:07Z', '2026-03-04T05:06:07.000Z'],
    ['2026-03-04T05:06:07.123456Z', '2026-03-04T05:06:07.123Z'],
    ['2026-03-03T23:36:07.5-05:30', '2026-03-04T05:06:07.500Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
    ['0050-06-01T00:00:00Z', '0050-06-01T00:00:00.000Z'],
  ])('when occurredAt is %s, then it is stored as %s (UTC, milliseconds)', async (sent, stored) => {
    const { tenantId, token, contact } = await tenantWithContact();

    await svc.record('by-contact-id', token, {
      contactId: contact.id,
      eventName: 'x',
      occurredAt: sent,
    });

    const state = await storedState(svc.pool, tenantId);
    expect(state.events[0]!.occurred_at.toISOString()).toBe(stored);
    expect(JSON.parse(state.outbox[0]!.value).occurredAt).toBe(stored);
  });

  it('when properties are sent, then their JSON text is stored with the key order, nesting and strings as sent', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    const properties = {
      zeta: 1,
      alpha: { nested: [1, 'two', null, true, { deep: 'ü → 😀' }] },
      quote: 'say "hi"\\n',
      empty: {},
      n: -12.5,
    };

    await svc.record('by-contact-id', token, {
      contactId: contact.id,
      eventName: 'x',
      occurredAt: OCCURRED,
      properties,
    });

    const { events, outbox } = await storedState(svc.pool, tenantId);
    expect(events[0]!.properties).toBe(JSON.stringify(properties));
    expect(JSON.parse(outbox[0]!.value).properties).toStrictEqual(properties);
  });

  it('when names, keys and properties hold control characters, quotes and backslashes, then each Event keeps exactly its own', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    const sent = [
      { eventName: 'a\u0001b', dedupKey: 'k\u0002,"1"', properties: { s: '\u0001\u0002,{"x"}\\' } },
      { eventName: 'no properties', dedupKey: 'k,2' },
      { eventName: 'c"\\d', properties: { '\u0001': ['\u0002', null, 'e\nf'] } },
    ];

    const res = await svc.record(
      'by-contact-id',
      token,
      sent.map((e) => ({ ...e, contactId: contact.id, occurredAt: OCCURRED })),
    );

    expect(res.status).toBe(202);
    const { events, outbox } = await storedState(svc.pool, tenantId);
    const byName = (name: string) => events.find((e) => e.event_name === name);
    for (const e of sent) {
      const stored = byName(e.eventName)!;
      expect(stored.dedup_key).toBe(e.dedupKey ?? null);
      expect(stored.properties).toBe(e.properties ? JSON.stringify(e.properties) : null);
      const message = JSON.parse(outbox.find((m) => m.value.includes(stored.id))!.value);
      expect(message).toMatchObject({
        eventId: stored.id,
        eventName: e.eventName,
        dedupKey: e.dedupKey ?? null,
        properties: e.properties ?? null,
      });
    }
  });

  it('when properties hold a key JavaScript treats specially (__proto__), then it is kept as sent', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    const rawBody = `{"contactId":"${contact.id}","eventName":"x","occurredAt":"${OCCURRED}","properties":{"__proto__":{"admin":true},"constructor":1}}`;

    const res = await svc.request('POST', '/v1/events/by-contact-id', {
      token,
      rawBody,
      headers: { 'content-type': 'application/json' },
    });

    expect(res.status).toBe(202);
    const { events, outbox } = await storedState(svc.pool, tenantId);
    expect(events[0]!.properties).toBe('{"__proto__":{"admin":true},"constructor":1}');
    expect(outbox[0]!.value).toContain('"properties":{"__proto__":{"admin":true},"constructor":1}');
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('when an Event carries fields of other routes or unknown fields, then they are ignored and not stored', async () => {
    const { tenantId, token, contact } = await tenantWithContact();

    const res = await svc.record('by-contact-id', token, {
      contactId: contact.id,
      contactExternalId: 'nobody-has-this',
      contactEmail: 'nobody@example.com',
      color: 'blue',
      eventName: 'x',
      occurredAt: OCCURRED,
    });

    expect(res.status).toBe(202);
    const { events, outbox } = await storedState(svc.pool, tenantId);
    expect(events).toHaveLength(1);
    expect(JSON.stringify(events[0]!)).not.toMatch(/nobody|blue/);
    expect(outbox[0]!.value).not.toMatch(/nobody|blue/);
  });

  it('when Events are recorded, then one outbox message each, keyed by Contact, valid against the message schema', async () => {
    const { tenantId, token, contact } = await tenantWithContact();

    await svc.record('by-contact-id', token, [
      {
        contactId: contact.id,
        eventName: 'first',
        occurredAt: OCCURRED,
        dedupKey: 'd-1',
        properties: { a: 1 },
      },
      { contactId: contact.id, eventName: 'second', occurredAt: OCCURRED },
    ]);

    const { events, outbox } = await storedState(svc.pool, tenantId);
    expect(outbox).toHaveLength(2);
    const byName = new Map(events.map((e) => [e.event_name, e]));
    for (const message of outbox) {
      expect(message.topic).toBe(TOPICS.eventsRecorded);
      expect(message.key).toBe(`${tenantId}:contact:${contact.id}`);
      expect(message.subject_id).toBe(contact.id);
      const value = eventRecordedMessage.parse(JSON.parse(message.value));
      const event = byName.get(value.eventName)!;
      expect(value).toStrictEqual({
        version: 1,
        type: 'event.recorded',
        messageId: event.id,
        tenantId,
        eventId: event.id,
        contactId: contact.id,
        organizationExternalId: null,
        eventName: event.event_name,
        occurredAt: OCCURRED,
        receivedAt: event.received_at.toISOString(),
        dedupKey: event.dedup_key,
        properties: event.properties === null ? null : JSON.parse(event.properties),
      });
      expect(value.receivedAt).toMatch(TIMESTAMP);
    }
    // In request order, so one Contact's Events are published in the order they were sent.
    expect(outbox.map((m) => JSON.parse(m.value).eventName)).toEqual(['first', 'second']);
  });

  it('when Events are recorded, then their ids are time-ordered (UUID version 7 of the time they were recorded)', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    const before = Date.now();

    await svc.record('by-contact-id', token, [
      { contactId: contact.id, eventName: 'first', occurredAt: OCCURRED },
      { contactId: contact.id, eventName: 'second', occurredAt: OCCURRED },
    ]);

    const { events } = await storedState(svc.pool, tenantId);
    expect(events).toHaveLength(2);
    for (const event of events) {
      expect(event.id).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      const madeAt = parseInt(event.id.replaceAll('-', '').slice(0, 12), 16);
      expect(madeAt).toBeGreaterThanOrEqual(before);
      expect(madeAt).toBeLessThanOrEqual(event.received_at.getTime() + 1000);
    }
  });
});

describe('CORS', () => {
  it('when a browser sends a preflight, then 204 allowing POST, Authorization and Content-Type', async () => {
    const res = await svc.request('OPTIONS', '/v1/events/by-email', {
      headers: {
        origin: 'https://shop.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });

    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toMatch(/POST/);
    expect(res.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    expect(res.headers.get('access-control-allow-headers')).toMatch(/Content-Type/);
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('when an Event is recorded from a browser, then the 202 allows any origin', async () => {
    const { token, contact } = await tenantWithContact();

    const res = await svc.request('POST', '/v1/events/by-contact-id', {
      token,
      headers: { origin: 'https://shop.example' },
      body: { contactId: contact.id, eventName: 'x', occurredAt: OCCURRED },
    });

    expect(res.status).toBe(202);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it.each([
    ['401', undefined, {}],
    ['400', 'token', []],
  ])(
    'when the answer is an error (%s), then it allows any origin too',
    async (status, auth, body) => {
      const { token } = svc.newTenant();

      const res = await svc.request('POST', '/v1/events/by-email', {
        ...(auth ? { token } : {}),
        body,
      });

      expect(String(res.status)).toBe(status);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
    },
  );
});

describe('edge statuses', () => {
  const event = {
    contactId: '00000000-0000-4000-8000-000000000000',
    eventName: 'x',
    occurredAt: OCCURRED,
  };

  it('when no token is sent, then 401 unauthenticated', async () => {
    const res = await svc.request('POST', '/v1/events/by-contact-id', { body: event });

    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: 'unauthenticated' });
  });

  it('when the token is expired, then 401 unauthenticated', async () => {
    const { tenantId } = svc.newTenant();
    const token = svc.tokenFor(tenantId, ['events:write'], { expiresIn: -60 });

    const res = await svc.record('by-contact-id', token, event);

    expect(res.status).toBe(401);
  });

  it('when the key lacks events:write, then 403 naming the scope', async () => {
    const { tenantId } = svc.newTenant();
    const token = svc.tokenFor(tenantId, ['contacts:write', 'contacts:read']);

    const res = await svc.record('by-contact-id', token, event);

    expect(res.status).toBe(403);
    expect(await res.json()).toStrictEqual({
      code: 'insufficient_scope',
      message: 'missing scope events:write',
    });
  });

  it('when a publishable key (events:write only) records, then 202', async () => {
    const { tenantId, contact } = await tenantWithContact();
    const token = svc.tokenFor(tenantId, ['events:write']);

    const res = await svc.record('by-contact-id', token, { ...event, contactId: contact.id });

    expect(res.status).toBe(202);
  });

  it('when the route is asked with GET, then 405 allowing POST', async () => {
    const { token } = svc.newTenant();

    const res = await svc.request('GET', '/v1/events/by-email', { token });

    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(await res.json()).toMatchObject({ code: 'method_not_allowed' });
  });

  it('when the route is unknown, then 404 not_found', async () => {
    const { token } = svc.newTenant();

    const res = await svc.record('by-phone', token, event);

    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'not_found' });
  });

  it('when the body is over 1 MiB, then 413 payload_too_large and nothing is recorded', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    const big = Array.from({ length: 40 }, (_, i) => ({
      contactId: contact.id,
      eventName: `e${i}`,
      occurredAt: OCCURRED,
      properties: { pad: 'x'.repeat(30_000) },
    }));
    expect(Buffer.byteLength(JSON.stringify(big))).toBeGreaterThan(1024 * 1024);

    const res = await svc.record('by-contact-id', token, big);

    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ code: 'payload_too_large' });
    expect((await storedState(svc.pool, tenantId)).events).toEqual([]);
  });

  it.each([
    ['text/plain', JSON.stringify(event)],
    ['application/x-www-form-urlencoded', 'eventName=x'],
  ])('when the Content-Type is %p, then 400 validation_error', async (contentType, rawBody) => {
    const { token } = svc.newTenant();

    const res = await svc.request('POST', '/v1/events/by-contact-id', {
      token,
      rawBody,
      headers: { 'content-type': contentType },
    });

    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'validation_error' });
  });

  it('when the body is not JSON, then 400 validation_error', async () => {
    const { token } = svc.newTenant();

    const res = await svc.request('POST', '/v1/events/by-contact-id', {
      token,
      rawBody: '{"eventName": ',
      headers: { 'content-type': 'application/json' },
    });

    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'validation_error' });
  });

  it("when recording waits too long for a Contact's lock (an erasure running long), then 503 with Retry-After and nothing recorded", async () => {
    const slow = await startEventsService({ statementTimeoutMs: 300 });
    const { tenantId, token } = slow.newTenant();
    const contact = await slow.contacts.createContact(tenantId, { externalId: 'busy' });
    const erasure = await slow.pool.connect();
    try {
      await erasure.query('begin');
      await erasure.query('select pg_advisory_xact_lock($1::bigint)', [
        contactLockKey(tenantId, contact.id),
      ]);

      const res = await slow.record('by-contact-id', token, { ...event, contactId: contact.id });

      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBeTruthy();
      expect(await res.json()).toMatchObject({ code: 'service_unavailable' });
      expect((await storedState(slow.pool, tenantId)).events).toEqual([]);
    } finally {
      await erasure.query('rollback');
      erasure.release();
      await slow.close();
    }
  });

  it('when a caller sends X-Request-Id, then it is echoed', async () => {
    const { token, contact } = await tenantWithContact();

    const res = await svc.request('POST', '/v1/events/by-contact-id', {
      token,
      headers: { 'x-request-id': 'req-123' },
      body: { ...event, contactId: contact.id },
    });

    expect(res.headers.get('x-request-id')).toBe('req-123');
  });
});
