// Suspension: while a Tenant is suspended every route that changes something answers
// 402 problem details, except both erase routes; reads, exports and the token exchange keep
// working. The change holds on every service as soon as the operator call has answered, and
// survives the loss of the Redis mirror.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createRedis, subscriptionKeyFor } from './redis-support.js';
import { accessToken, admin, basic, call, exchange, newKey, newTenant } from './support.js';

const ALL_SCOPES = [
  'contacts:read',
  'contacts:write',
  'contacts:export',
  'contacts:erase',
  'events:write',
];
const OCCURRED = '2026-03-01T10:00:00.000Z';

async function suspend(tenantId: string) {
  for (let i = 0; i < 3; i += 1) {
    const res = await admin('POST', `/tenants/${tenantId}/billing/payment-failures`);
    expect(res.status).toBe(200);
  }
  expect(await (await admin('GET', `/tenants/${tenantId}/billing`)).json()).toEqual({
    state: 'suspended',
    consecutiveFailures: 3,
  });
}

async function reactivate(tenantId: string) {
  const res = await admin('POST', `/tenants/${tenantId}/billing/payment-details`);
  expect(await res.json()).toEqual({ state: 'active', consecutiveFailures: 0 });
}

async function expectSuspended(res: Response) {
  expect(res.status).toBe(402);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.headers.get('x-request-id')).toBeTruthy();
  expect(await res.json()).toStrictEqual({
    type: 'subscription_suspended',
    title: expect.any(String),
    status: 402,
    detail: expect.any(String),
  });
}

interface Fixture {
  tenantId: string;
  token: string;
  contact: { id: string; externalId: string; email: string };
  organization: string;
}

async function fixture(): Promise<Fixture> {
  const tenantId = await newTenant('Suspended Co');
  const token = await accessToken(tenantId, ALL_SCOPES);
  const externalId = `user-${randomUUID().slice(0, 8)}`;
  const email = `${externalId}@example.com`;
  const created = await call('PUT', `/v1/contacts/${externalId}`, token, { email });
  expect(created.status).toBe(201);
  const organization = `org-${randomUUID().slice(0, 8)}`;
  expect(
    (await admin('POST', `/tenants/${tenantId}/organizations`, { externalId: organization }))
      .status,
  ).toBe(201);
  return {
    tenantId,
    token,
    contact: { id: (await created.json<{ id: string }>()).id, externalId, email },
    organization,
  };
}

/** Every public route that changes something, except the erase routes, with a valid request. */
function writes(f: Fixture): [string, () => Promise<Response>][] {
  const event = (identity: object) => ({
    ...identity,
    eventName: 'plan_changed',
    occurredAt: OCCURRED,
    dedupKey: randomUUID(),
  });
  return [
    [
      'PUT /v1/contacts/{externalId}',
      () =>
        call('PUT', `/v1/contacts/${f.contact.externalId}`, f.token, {
          email: f.contact.email,
          name: 'Ada',
        }),
    ],
    [
      'POST /v1/contacts',
      () => call('POST', '/v1/contacts', f.token, { email: f.contact.email, name: 'Ada L' }),
    ],
    [
      'POST /v1/events/by-contact-id',
      () => call('POST', '/v1/events/by-contact-id', f.token, event({ contactId: f.contact.id })),
    ],
    [
      'POST /v1/events/by-external-id',
      () =>
        call('POST', '/v1/events/by-external-id', f.token, [
          event({ contactExternalId: f.contact.externalId }),
        ]),
    ],
    [
      'POST /v1/events/by-email',
      () => call('POST', '/v1/events/by-email', f.token, event({ contactEmail: f.contact.email })),
    ],
    [
      'POST /v1/events/by-organization',
      () =>
        call(
          'POST',
          '/v1/events/by-organization',
          f.token,
          event({ organizationExternalId: f.organization }),
        ),
    ],
  ];
}

describe('a suspended subscription', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture();
  });

  it('when the Tenant is suspended, then every write answers 402 at once, and reads, export and the exchange still work', async () => {
    for (const [, send] of writes(f)) expect([200, 202]).toContain((await send()).status);

    await suspend(f.tenantId);
    for (const [route, send] of writes(f)) {
      const res = await send();
      if (res.status !== 402) throw new Error(`${route} answered ${res.status}, not 402`);
      await expectSuspended(res);
    }

    expect((await call('GET', `/v1/contacts/${f.contact.externalId}`, f.token)).status).toBe(200);
    expect((await call('GET', `/v1/contacts/by-id/${f.contact.id}`, f.token)).status).toBe(200);
    const exported = await call('GET', `/v1/contacts/by-id/${f.contact.id}/export`, f.token);
    expect(exported.status).toBe(200);
    expect((await exported.text()).split('\n').filter(Boolean).length).toBeGreaterThanOrEqual(4);
    expect((await call('GET', `/v1/contacts/${f.contact.externalId}/export`, f.token)).status).toBe(
      200,
    );
    const key = await newKey(f.tenantId, { kind: 'secret', scopes: ['contacts:read'] });
    expect((await exchange(basic(key.clientId, key.secret!))).status).toBe(200);
  });

  it('when payment details are updated, then every write works again at once', async () => {
    await reactivate(f.tenantId);
    for (const [route, send] of writes(f)) {
      const res = await send();
      if (![200, 202].includes(res.status)) throw new Error(`${route} answered ${res.status}`);
    }
  });

  it('when the Tenant is suspended, then both erase routes still erase', async () => {
    const g = await fixture();
    const other = `user-${randomUUID().slice(0, 8)}`;
    const second = await call('PUT', `/v1/contacts/${other}`, g.token, {
      email: `${other}@example.com`,
    });
    const secondId = (await second.json<{ id: string }>()).id;
    await suspend(g.tenantId);

    expect((await call('POST', `/v1/contacts/${g.contact.externalId}/erase`, g.token)).status).toBe(
      204,
    );
    expect((await call('POST', `/v1/contacts/by-id/${secondId}/erase`, g.token)).status).toBe(204);
    expect((await call('GET', `/v1/contacts/by-id/${secondId}`, g.token)).status).toBe(404);
    expect((await call('POST', `/v1/contacts/by-id/${secondId}/erase`, g.token)).status).toBe(204);
  });

  it('when the Redis mirror of a suspended Tenant is lost, then writes are still refused (billing answers from PostgreSQL and refills it)', async () => {
    const g = await fixture();
    await suspend(g.tenantId);
    const redis = await createRedis();
    try {
      expect(await redis.del(subscriptionKeyFor(g.tenantId))).toBe(1);
      for (const [route, send] of writes(g)) {
        const res = await send();
        if (res.status !== 402) throw new Error(`${route} answered ${res.status}, not 402`);
      }
      expect(await redis.get(subscriptionKeyFor(g.tenantId))).toMatch(/^suspended:/);
    } finally {
      await redis.close();
    }
  });
});
