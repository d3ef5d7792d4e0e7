// 422 unresolved_identity (unknown, erased, other routes' fields, acting Contact) and 503 when the contacts service
// cannot answer: all or nothing, so nothing of such a request is recorded.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  startEventsService,
  startFakeService,
  storedState,
  uniqueEmail,
  type TestEventsService,
} from '../support.js';
import { dedupCacheKey } from '../../src/recording/dedup-key.js';

let svc: TestEventsService;
beforeAll(async () => {
  svc = await startEventsService();
});
afterAll(() => svc.close());

const OCCURRED = '2026-03-04T05:06:07.123Z';
const unknownId = () => randomUUID();

async function expectNothingRecorded(service: TestEventsService, tenantId: string) {
  expect(await storedState(service.pool, tenantId)).toStrictEqual({
    events: [],
    claims: [],
    names: [],
    outbox: [],
  });
}

async function expect422(res: Response, unresolved: unknown[]) {
  const body = await res.json();
  expect(res.status).toBe(422);
  expect(body).toStrictEqual({
    code: 'unresolved_identity',
    message: expect.any(String),
    unresolved,
  });
}

const item = (fields: Record<string, unknown>) => ({
  contactId: null,
  contactExternalId: null,
  contactEmail: null,
  organizationExternalId: null,
  ...fields,
});

describe('422 unresolved_identity', () => {
  it('when a batch mixes known and unknown Contacts, then 422 listing exactly the unknown ones in order, and nothing is recorded', async () => {
    const { tenantId, token } = svc.newTenant();
    const known = await svc.contacts.createContact(tenantId, { externalId: 'known' });
    const missing1 = unknownId();
    const missing2 = unknownId();

    const res = await svc.record('by-contact-id', token, [
      { contactId: known.id, eventName: 'ok', occurredAt: OCCURRED, dedupKey: 'k0' },
      { contactId: missing1, eventName: 'first_missing', occurredAt: OCCURRED, dedupKey: 'k1' },
      { contactId: known.id, eventName: 'ok', occurredAt: OCCURRED },
      { contactId: missing2, eventName: 'second_missing', occurredAt: OCCURRED },
    ]);

    await expect422(res, [
      item({ index: 1, eventName: 'first_missing', contactId: missing1 }),
      item({ index: 3, eventName: 'second_missing', contactId: missing2 }),
    ]);
    await expectNothingRecorded(svc, tenantId);
    expect(await svc.redis.get(dedupCacheKey(tenantId, 'k0'))).toBeNull();
  });

  it('when a single Event names an unknown Contact, then 422 with index 0', async () => {
    const { tenantId, token } = svc.newTenant();
    const missing = unknownId();

    const res = await svc.record('by-contact-id', token, {
      contactId: missing,
      eventName: 'x',
      occurredAt: OCCURRED,
    });

    await expect422(res, [item({ index: 0, eventName: 'x', contactId: missing })]);
    await expectNothingRecorded(svc, tenantId);
  });

  it('when the contactId is not a uuid, then it names nothing: 422 with the value as sent', async () => {
    const { tenantId, token } = svc.newTenant();

    const res = await svc.record('by-contact-id', token, {
      contactId: 'not-a-uuid',
      eventName: 'x',
      occurredAt: OCCURRED,
    });

    await expect422(res, [item({ index: 0, eventName: 'x', contactId: 'not-a-uuid' })]);
    await expectNothingRecorded(svc, tenantId);
  });

  it('when an unknown externalId or email is named, then the item carries it as sent and null for the rest', async () => {
    const { tenantId, token } = svc.newTenant();
    await svc.contacts.createContact(tenantId, { externalId: 'known' });

    const byExternalId = await svc.record('by-external-id', token, [
      { contactExternalId: 'known', eventName: 'a', occurredAt: OCCURRED },
      { contactExternalId: 'crm/7', eventName: 'b', occurredAt: OCCURRED },
    ]);
    const byEmail = await svc.record('by-email', token, [
      { contactEmail: 'Nobody@Example.com', eventName: 'c', occurredAt: OCCURRED },
    ]);

    await expect422(byExternalId, [item({ index: 1, eventName: 'b', contactExternalId: 'crm/7' })]);
    await expect422(byEmail, [
      item({ index: 0, eventName: 'c', contactEmail: 'Nobody@Example.com' }),
    ]);
    await expectNothingRecorded(svc, tenantId);
  });

  it("when an Event names a Contact that exists only through another route's field, then 422", async () => {
    const { tenantId, token } = svc.newTenant();
    const contact = await svc.contacts.createContact(tenantId, { externalId: 'known' });

    const res = await svc.record('by-external-id', token, {
      contactExternalId: 'unknown',
      contactId: contact.id,
      eventName: 'x',
      occurredAt: OCCURRED,
    });

    await expect422(res, [item({ index: 0, eventName: 'x', contactExternalId: 'unknown' })]);
    await expectNothingRecorded(svc, tenantId);
  });

  it('when a Contact of another Tenant is named, then it is unknown here', async () => {
    const other = svc.newTenant();
    const foreign = await svc.contacts.createContact(other.tenantId, { externalId: 'x' });
    const { tenantId, token } = svc.newTenant();

    const res = await svc.record('by-contact-id', token, {
      contactId: foreign.id,
      eventName: 'x',
      occurredAt: OCCURRED,
    });

    await expect422(res, [item({ index: 0, eventName: 'x', contactId: foreign.id })]);
    await expectNothingRecorded(svc, tenantId);
  });

  it('when a Contact Event names an unknown organization, then 422 listing the organization', async () => {
    const { tenantId, token } = svc.newTenant();
    const email = uniqueEmail();
    await svc.contacts.createContact(tenantId, { email });
    await svc.contacts.createOrganization(tenantId, 'acme');

    const res = await svc.record('by-email', token, [
      { contactEmail: email, organizationExternalId: 'acme', eventName: 'a', occurredAt: OCCURRED },
      {
        contactEmail: email,
        organizationExternalId: 'globex',
        eventName: 'b',
        occurredAt: OCCURRED,
      },
    ]);

    await expect422(res, [
      item({ index: 1, eventName: 'b', contactEmail: email, organizationExternalId: 'globex' }),
    ]);
    await expectNothingRecorded(svc, tenantId);
  });

  it('when an organization Event names an unknown organization, then 422', async () => {
    const { tenantId, token } = svc.newTenant();

    const res = await svc.record('by-organization', token, {
      organizationExternalId: 'nobody-inc',
      eventName: 'x',
      occurredAt: OCCURRED,
    });

    await expect422(res, [
      item({ index: 0, eventName: 'x', organizationExternalId: 'nobody-inc' }),
    ]);
    await expectNothingRecorded(svc, tenantId);
  });

  it('when an organization Event names an unknown acting Contact, then 422 for it', async () => {
    const { tenantId, token } = svc.newTenant();
    await svc.contacts.createOrganization(tenantId, 'acme');
    const contact = await svc.contacts.createContact(tenantId, { externalId: 'known' });
    const missing = unknownId();

    const res = await svc.record('by-organization', token, [
      { organizationExternalId: 'acme', eventName: 'a', occurredAt: OCCURRED },
      {
        organizationExternalId: 'acme',
        contactId: contact.id,
        eventName: 'b',
        occurredAt: OCCURRED,
      },
      { organizationExternalId: 'acme', contactId: missing, eventName: 'c', occurredAt: OCCURRED },
    ]);

    await expect422(res, [
      item({ index: 2, eventName: 'c', contactId: missing, organizationExternalId: 'acme' }),
    ]);
    await expectNothingRecorded(svc, tenantId);
  });

  it('when a Contact was erased here, then its Events are refused with 422 though the contacts service still finds it', async () => {
    const { tenantId, token } = svc.newTenant();
    const erased = await svc.contacts.createContact(tenantId, { externalId: 'erased' });
    await svc.contacts.createContact(tenantId, { externalId: 'kept' });
    // The erasure has reached this service; the contacts service deletes its row after that.
    await svc.pool.query('insert into erased_contacts (tenant_id, contact_id) values ($1, $2)', [
      tenantId,
      erased.id,
    ]);

    const res = await svc.record('by-external-id', token, [
      { contactExternalId: 'kept', eventName: 'a', occurredAt: OCCURRED, dedupKey: 'k-kept' },
      { contactExternalId: 'erased', eventName: 'b', occurredAt: OCCURRED, dedupKey: 'k-erased' },
    ]);

    await expect422(res, [item({ index: 1, eventName: 'b', contactExternalId: 'erased' })]);
    await expectNothingRecorded(svc, tenantId);
  });

  it('when a Contact was erased here, then the 422 lists every Event about it, those skipped as duplicates (in the request or by the fast path) included, in request order', async () => {
    const { tenantId, token } = svc.newTenant();
    const erased = await svc.contacts.createContact(tenantId, { externalId: 'erased' });
    const kept = await svc.contacts.createContact(tenantId, { externalId: 'kept' });
    await svc.pool.query('insert into erased_contacts (tenant_id, contact_id) values ($1, $2)', [
      tenantId,
      erased.id,
    ]);
    // A claim the fast path remembers (only committed ones are ever written there).
    await svc.redis.set(dedupCacheKey(tenantId, 'k-known'), randomUUID(), {
      expiration: { type: 'PX', value: 10_000 },
    });

    const res = await svc.record('by-contact-id', token, [
      { contactId: erased.id, eventName: 'a', occurredAt: OCCURRED, dedupKey: 'k-dup' },
      { contactId: kept.id, eventName: 'b', occurredAt: OCCURRED },
      { contactId: erased.id, eventName: 'c', occurredAt: OCCURRED, dedupKey: 'k-dup' },
      { contactId: erased.id, eventName: 'd', occurredAt: OCCURRED, dedupKey: 'k-known' },
      { contactId: erased.id, eventName: 'e', occurredAt: OCCURRED },
    ]);

    await expect422(
      res,
      ['a', 'c', 'd', 'e'].map((eventName) =>
        item({ index: 'abcde'.indexOf(eventName), eventName, contactId: erased.id }),
      ),
    );
    await expectNothingRecorded(svc, tenantId);
  });

  it('when an organization Event names an erased acting Contact, then 422 too', async () => {
    const { tenantId, token } = svc.newTenant();
    await svc.contacts.createOrganization(tenantId, 'acme');
    const erased = await svc.contacts.createContact(tenantId, { externalId: 'erased' });
    await svc.pool.query('insert into erased_contacts (tenant_id, contact_id) values ($1, $2)', [
      tenantId,
      erased.id,
    ]);

    const res = await svc.record('by-organization', token, {
      organizationExternalId: 'acme',
      contactId: erased.id,
      eventName: 'x',
      occurredAt: OCCURRED,
    });

    await expect422(res, [
      item({ index: 0, eventName: 'x', contactId: erased.id, organizationExternalId: 'acme' }),
    ]);
    await expectNothingRecorded(svc, tenantId);
  });

  it('when the missing Contact is created afterwards, then the same request records everything', async () => {
    const { tenantId, token } = svc.newTenant();
    await svc.contacts.createContact(tenantId, { externalId: 'a' });
    const body = [
      { contactExternalId: 'a', eventName: 'x', occurredAt: OCCURRED, dedupKey: 'k-a' },
      { contactExternalId: 'b', eventName: 'x', occurredAt: OCCURRED, dedupKey: 'k-b' },
    ];
    expect((await svc.record('by-external-id', token, body)).status).toBe(422);

    await svc.contacts.createContact(tenantId, { externalId: 'b' });
    const res = await svc.record('by-external-id', token, body);

    expect(res.status).toBe(202);
    expect(await res.json()).toStrictEqual({ accepted: 2 });
    expect((await storedState(svc.pool, tenantId)).events).toHaveLength(2);
  });
});

describe('503 when the contacts service cannot answer', () => {
  async function withContacts(
    handler: Parameters<typeof startFakeService>[0],
    run: (service: TestEventsService) => Promise<void>,
  ) {
    const fake = await startFakeService(handler);
    const service = await startEventsService({ contactsUrl: fake.url, contactsTimeoutMs: 500 });
    try {
      await run(service);
    } finally {
      await service.close();
      await fake.close();
    }
  }

  async function expect503(service: TestEventsService) {
    const { tenantId, token } = service.newTenant();
    const started = Date.now();

    const res = await service.record('by-contact-id', token, [
      { contactId: randomUUID(), eventName: 'x', occurredAt: OCCURRED, dedupKey: 'k' },
    ]);

    expect(res.status).toBe(503);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await res.json()).toStrictEqual({
      code: 'service_unavailable',
      message: expect.stringMatching(/contacts service/),
    });
    expect(Date.now() - started).toBeLessThan(3_000);
    await expectNothingRecorded(service, tenantId);
  }

  it('when the contacts service answers 500, then 503 with Retry-After and nothing recorded', async () => {
    await withContacts((_req, res) => res.writeHead(500).end('{}'), expect503);
  });

  it('when the contacts service answers 502 from a proxy, then 503', async () => {
    await withContacts(
      (_req, res) => res.writeHead(502).end('<html>bad gateway</html>'),
      expect503,
    );
  });

  it('when the contacts service does not answer in time, then 503 after the timeout', async () => {
    await withContacts(() => {}, expect503);
  });

  it('when the contacts service drops the connection, then 503', async () => {
    await withContacts((req) => req.socket.destroy(), expect503);
  });

  it('when nothing listens where the contacts service should be, then 503', async () => {
    const service = await startEventsService({ contactsUrl: 'http://127.0.0.1:9' });
    try {
      await expect503(service);
    } finally {
      await service.close();
    }
  });

  it('when the contacts service is asked, then once per request with the service token and only the route\u2019s fields', async () => {
    const calls: Array<{ url?: string; authorization?: string; body: unknown }> = [];
    await withContacts(
      (req, res) => {
        let text = '';
        req.on('data', (chunk: Buffer) => (text += chunk.toString()));
        req.on('end', () => {
          const body = JSON.parse(text) as { items: unknown[] };
          calls.push({ url: req.url, authorization: req.headers.authorization, body });
          res.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              items: body.items.map(() => ({ contactId: null, organizationExists: null })),
            }),
          );
        });
      },
      async (service) => {
        const { tenantId, token } = service.newTenant();
        await service.record('by-email', token, [
          {
            contactEmail: 'a@example.com',
            contactId: randomUUID(),
            contactExternalId: 'ignored',
            eventName: 'x',
            occurredAt: OCCURRED,
          },
          {
            contactEmail: 'b@example.com',
            organizationExternalId: 'acme',
            eventName: 'y',
            occurredAt: OCCURRED,
          },
        ]);
        expect(calls).toStrictEqual([
          {
            url: '/internal/v1/identities/resolve',
            authorization: expect.stringMatching(/^Bearer test-service-/),
            body: {
              tenantId,
              items: [
                { contactEmail: 'a@example.com' },
                { contactEmail: 'b@example.com', organizationExternalId: 'acme' },
              ],
            },
          },
        ]);
      },
    );
  });
});
