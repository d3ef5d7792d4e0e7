// The seam between the contacts service and this one (docs/contacts.md, export and erasure): the real
// contacts service, in-process, lists this events service in its CONTACT_DATA_SERVICES; a
// Contact's export and erasure through the contacts service's public routes include the Events.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { insertEvents, newEvent, parseLines } from '../contact-data-support.js';
import { startEventsService, type TestEventsService } from '../support.js';

let service: TestEventsService;
const occurredAt = '2026-11-21T10:00:00.250+01:00';

beforeAll(async () => {
  service = await startEventsService({ contactDataSeam: true });
});

afterAll(async () => {
  await service?.close();
});

const eventsOf = async (tenantId: string, contactId: string) =>
  (
    await service.pool.query<{ id: string; event_name: string }>(
      'select id, event_name from events where tenant_id = $1 and contact_id = $2',
      [tenantId, contactId],
    )
  ).rows;

describe('export through the contacts service', () => {
  test("when a Contact has Events, then its export file holds the Contact's line, then one line per Event about it, recorded through every route", async () => {
    const { tenantId, token } = service.newTenant();
    const contact = await service.contacts.createContact(tenantId, { externalId: 'seam/1' });
    await service.contacts.createOrganization(tenantId, 'acme');
    const other = await service.contacts.createContact(tenantId);
    const recorded = [
      await service.record('by-contact-id', token, {
        contactId: contact.id,
        eventName: 'Signed Up',
        occurredAt,
        dedupKey: 'signup',
        properties: { plan: 'free', seats: 2 },
      }),
      await service.record('by-external-id', token, {
        contactExternalId: 'seam/1',
        eventName: 'Logged In',
        occurredAt,
      }),
      await service.record('by-email', token, {
        contactEmail: contact.email.toUpperCase(),
        eventName: 'Email Opened',
        occurredAt,
      }),
      await service.record('by-organization', token, {
        organizationExternalId: 'acme',
        contactId: contact.id,
        eventName: 'Plan Upgraded',
        occurredAt,
      }),
      await service.record('by-organization', token, {
        organizationExternalId: 'acme',
        eventName: 'Invoice Paid',
        occurredAt,
      }),
      await service.record('by-contact-id', token, {
        contactId: other.id,
        eventName: 'Not Theirs',
        occurredAt,
      }),
    ];
    expect(recorded.map((r) => r.status)).toEqual([202, 202, 202, 202, 202, 202]);

    const res = await service.contacts.request('GET', `/v1/contacts/by-id/${contact.id}/export`, {
      token: service.tokenFor(tenantId),
    });

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const lines = parseLines(await res.text()) as Array<{
      type: string;
      data: Record<string, unknown>;
    }>;
    expect(lines[0]).toMatchObject({
      type: 'contact',
      data: { id: contact.id, externalId: 'seam/1', email: contact.email },
    });
    expect(lines.slice(1).map((l) => [l.type, l.data.eventName])).toEqual([
      ['event', 'Signed Up'],
      ['event', 'Logged In'],
      ['event', 'Email Opened'],
      ['event', 'Plan Upgraded'],
    ]);
    expect(lines[1]).toEqual({
      type: 'event',
      data: {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        eventName: 'Signed Up',
        occurredAt: '2026-11-21T09:00:00.250Z',
        receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        organizationExternalId: null,
        dedupKey: 'signup',
        properties: { plan: 'free', seats: 2 },
      },
    });
    expect(lines[4]?.data.organizationExternalId).toBe('acme');
  });

  test('when a Contact has thousands of Events, then the export through the contacts service carries every one, in order', async () => {
    const { tenantId } = service.newTenant();
    const contact = await service.contacts.createContact(tenantId);
    const start = Date.parse('2026-11-01T00:00:00.000Z');
    const events = Array.from({ length: 3000 }, (_, i) =>
      newEvent({
        tenantId,
        contactId: contact.id,
        eventName: `event ${i}`,
        receivedAt: new Date(start + i).toISOString(),
      }),
    );
    await insertEvents(service.pool, events);

    const res = await service.contacts.request('GET', `/v1/contacts/by-id/${contact.id}/export`, {
      token: service.tokenFor(tenantId),
    });

    expect(res.status).toBe(200);
    const lines = parseLines(await res.text()) as Array<{ data: { id: string } }>;
    expect(lines).toHaveLength(1 + events.length);
    expect(lines.slice(1).map((l) => l.data.id)).toEqual(events.map((e) => e.id));
  });
});

describe('erasure through the contacts service', () => {
  test('when a Contact with Events is erased, then 204, the events service holds none of its Events, and Events about it are refused from then on', async () => {
    const { tenantId, token } = service.newTenant();
    const contact = await service.contacts.createContact(tenantId, { externalId: 'seam/erase' });
    const keep = await service.contacts.createContact(tenantId);
    for (const c of [contact, keep]) {
      const res = await service.record('by-contact-id', token, [
        { contactId: c.id, eventName: 'One', occurredAt, properties: { email: c.email } },
        { contactId: c.id, eventName: 'Two', occurredAt, dedupKey: `k-${c.id}` },
      ]);
      expect(res.status).toBe(202);
    }
    expect(await eventsOf(tenantId, contact.id)).toHaveLength(2);

    const res = await service.contacts.request('POST', `/v1/contacts/by-id/${contact.id}/erase`, {
      token: service.tokenFor(tenantId),
    });

    expect(res.status).toBe(204);
    expect(await eventsOf(tenantId, contact.id)).toEqual([]);
    expect(await eventsOf(tenantId, keep.id)).toHaveLength(2);
    const unsent = await service.pool.query('select 1 from outbox where subject_id = $1', [
      contact.id,
    ]);
    expect(unsent.rowCount).toBe(0);
    const erased = await service.pool.query(
      'select 1 from erased_contacts where tenant_id = $1 and contact_id = $2',
      [tenantId, contact.id],
    );
    expect(erased.rowCount).toBe(1);

    const later = await service.record('by-contact-id', token, {
      contactId: contact.id,
      eventName: 'Too Late',
      occurredAt,
    });
    expect(later.status).toBe(422);
    const exported = await service.contacts.request(
      'GET',
      `/v1/contacts/by-id/${contact.id}/export`,
      { token: service.tokenFor(tenantId) },
    );
    expect(exported.status).toBe(404);
    const retry = await service.contacts.request('POST', `/v1/contacts/by-id/${contact.id}/erase`, {
      token: service.tokenFor(tenantId),
    });
    expect(retry.status).toBe(204);
  });

  test("when another Tenant's Contact id is erased through this Tenant, then 404 and its Events stay", async () => {
    const { tenantId, token } = service.newTenant();
    const contact = await service.contacts.createContact(tenantId);
    await service.record('by-contact-id', token, {
      contactId: contact.id,
      eventName: 'Mine',
      occurredAt,
    });

    const res = await service.contacts.request('POST', `/v1/contacts/by-id/${contact.id}/erase`, {
      token: service.tokenFor(randomUUID()),
    });

    expect(res.status).toBe(404);
    expect(await eventsOf(tenantId, contact.id)).toHaveLength(1);
  });
});
