// The event-name catalog (names as first recorded) and its operator route
// GET /admin/v1/tenants/{tenantId}/event-names.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { errors } from '@herald/errors';
import {
  ADMIN_TOKEN,
  startEventsService,
  storedState,
  TIMESTAMP,
  type TestEventsService,
} from '../support.js';

let svc: TestEventsService;
beforeAll(async () => {
  svc = await startEventsService();
});
afterAll(() => svc.close());

const OCCURRED = '2026-03-04T05:06:07.123Z';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function tenantWithContact() {
  const tenant = svc.newTenant();
  const contact = await svc.contacts.createContact(tenant.tenantId, { externalId: 'user-1' });
  return { ...tenant, contact };
}

const named = (contactId: string, eventName: string, dedupKey?: string) => ({
  contactId,
  eventName,
  occurredAt: OCCURRED,
  ...(dedupKey === undefined ? {} : { dedupKey }),
});

async function catalog(tenantId: string) {
  const res = await svc.adminGet(`/tenants/${tenantId}/event-names`);
  expect(res.status).toBe(200);
  return (await res.json<{ eventNames: Array<{ name: string; firstSeenAt: string }> }>())
    .eventNames;
}

describe('cataloging', () => {
  it('when a name is recorded for the first time, then it is cataloged with firstSeenAt, and later sightings keep it', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    const before = Date.now();
    await svc.record('by-contact-id', token, [
      named(contact.id, 'signed_up'),
      named(contact.id, 'signed_up'),
    ]);
    const first = await catalog(tenantId);
    await sleep(20);

    await svc.record('by-contact-id', token, [
      named(contact.id, 'signed_up'),
      named(contact.id, 'paid'),
    ]);

    expect(first).toStrictEqual([
      { name: 'signed_up', firstSeenAt: expect.stringMatching(TIMESTAMP) },
    ]);
    expect(Date.parse(first[0]!.firstSeenAt)).toBeGreaterThanOrEqual(before - 1_000);
    expect(Date.parse(first[0]!.firstSeenAt)).toBeLessThanOrEqual(Date.now());
    const after = await catalog(tenantId);
    expect(after).toStrictEqual([
      { name: 'paid', firstSeenAt: expect.stringMatching(TIMESTAMP) },
      { name: 'signed_up', firstSeenAt: first[0]!.firstSeenAt },
    ]);
    expect(Date.parse(after[0]!.firstSeenAt)).toBeGreaterThan(Date.parse(first[0]!.firstSeenAt));
  });

  it('when names come through every route, then all are cataloged, sorted by name (code points), case kept', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    await svc.contacts.createOrganization(tenantId, 'acme');

    await svc.record('by-contact-id', token, named(contact.id, 'b'));
    await svc.record('by-external-id', token, {
      contactExternalId: 'user-1',
      eventName: 'B',
      occurredAt: OCCURRED,
    });
    await svc.record('by-organization', token, {
      organizationExternalId: 'acme',
      eventName: 'ä',
      occurredAt: OCCURRED,
    });
    await svc.record('by-contact-id', token, [named(contact.id, 'a'), named(contact.id, 'A b')]);

    expect((await catalog(tenantId)).map((n) => n.name)).toEqual(['A b', 'B', 'a', 'b', 'ä']);
  });

  it('when a request is refused (422, 400), then none of its names is cataloged', async () => {
    const { tenantId, token, contact } = await tenantWithContact();

    const unresolved = await svc.record('by-contact-id', token, [
      named(contact.id, 'would_be_new'),
      named(randomUUID(), 'also_new'),
    ]);
    const invalid = await svc.record('by-contact-id', token, [
      named(contact.id, 'new_too'),
      { ...named(contact.id, 'x'), occurredAt: 'nope' },
    ]);

    expect([unresolved.status, invalid.status]).toEqual([422, 400]);
    expect(await catalog(tenantId)).toEqual([]);
    expect((await storedState(svc.pool, tenantId)).names).toEqual([]);
  });

  it('when an Event is a skipped duplicate under a new name, then that name is not cataloged (it was not recorded)', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    await svc.record('by-contact-id', token, named(contact.id, 'order_placed', 'order-1'));

    await svc.record('by-contact-id', token, named(contact.id, 'order_created', 'order-1'));

    expect((await catalog(tenantId)).map((n) => n.name)).toEqual(['order_placed']);
  });

  it('when Tenants record names, then each sees only its own', async () => {
    const a = await tenantWithContact();
    const b = await tenantWithContact();

    await svc.record('by-contact-id', a.token, named(a.contact.id, 'only_a'));

    expect((await catalog(a.tenantId)).map((n) => n.name)).toEqual(['only_a']);
    expect(await catalog(b.tenantId)).toEqual([]);
  });

  it('when concurrent requests bring the same new names in different orders, then each is cataloged once and none fails', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    const names = ['n1', 'n2', 'n3', 'n4'];

    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        svc.record(
          'by-contact-id',
          token,
          (i % 2 ? [...names].reverse() : names).map((n) => named(contact.id, n)),
        ),
      ),
    );

    expect(answers.map((r) => r.status)).toEqual(Array(8).fill(202));
    expect((await catalog(tenantId)).map((n) => n.name)).toEqual(names);
  });
});

describe('GET /admin/v1/tenants/{tenantId}/event-names', () => {
  it('when the Tenant exists and recorded nothing, then 200 with an empty list', async () => {
    const { tenantId } = svc.newTenant();

    const res = await svc.adminGet(`/tenants/${tenantId}/event-names`);

    expect(res.status).toBe(200);
    expect(await res.json()).toStrictEqual({ eventNames: [] });
  });

  it.each([
    ['no token', undefined],
    ['a wrong token', 'Bearer wrong-admin-token'],
    ['a customer access token', 'customer'],
  ])('when the admin token is missing or wrong (%s), then 401', async (_what, authorization) => {
    const { tenantId, token } = svc.newTenant();
    const header = authorization === 'customer' ? `Bearer ${token}` : authorization;

    const res = await svc.request('GET', `/admin/v1/tenants/${tenantId}/event-names`, {
      headers: header === undefined ? {} : { authorization: header },
    });

    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: 'unauthenticated' });
  });

  it.each([
    ['an unknown Tenant id', randomUUID()],
    ['an id that is not a uuid', 'not-a-tenant'],
  ])('when the path names %s, then 404 not_found', async (_what, tenantId) => {
    const res = await svc.adminGet(`/tenants/${tenantId}/event-names`);

    expect(res.status).toBe(404);
    expect(await res.json()).toStrictEqual({ code: 'not_found', message: 'no such tenant' });
  });

  it('when the Tenant id is sent in upper case, then the same catalog', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    await svc.record('by-contact-id', token, named(contact.id, 'x'));

    const res = await svc.adminGet(`/tenants/${tenantId.toUpperCase()}/event-names`);

    expect(res.status).toBe(200);
    const body = await res.json<{ eventNames: Array<{ name: string }> }>();
    expect(body.eventNames.map((n) => n.name)).toEqual(['x']);
  });

  it('when the route is asked with POST, then 405 allowing GET', async () => {
    const { tenantId } = svc.newTenant();

    const res = await svc.request('POST', `/admin/v1/tenants/${tenantId}/event-names`, {
      token: ADMIN_TOKEN,
    });

    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
  });

  it('when the auth service cannot say whether the Tenant exists, then 503, not 404', async () => {
    const down = await startEventsService({
      tenantExists: async () => {
        throw errors.unavailable('cannot reach the auth service; retry later');
      },
    });
    try {
      const res = await down.adminGet(`/tenants/${randomUUID()}/event-names`);

      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBeTruthy();
    } finally {
      await down.close();
    }
  });
});
