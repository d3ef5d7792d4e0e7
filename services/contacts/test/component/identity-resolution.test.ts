// POST /internal/v1/identities/resolve: the events service's batch lookup, one call per
// Event request. Behind SERVICE_TOKEN, never a customer's token.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Pool } from '@herald/db';
import { resolveIdentities } from '../../src/domain/identity-resolution.js';
import {
  ADMIN_TOKEN,
  SERVICE_TOKEN,
  startContactsService,
  uniqueEmail,
  type TestContactsService,
} from '../support.js';

let svc: TestContactsService;
beforeAll(async () => {
  svc = await startContactsService();
});
afterAll(() => svc.close());

async function put(token: string, externalId: string, email: string) {
  const res = await svc.request('PUT', `/v1/contacts/${encodeURIComponent(externalId)}`, {
    token,
    body: { email },
  });
  expect(res.status).toBe(201);
  return (await res.json()).id as string;
}

async function post(token: string, email: string) {
  const res = await svc.request('POST', '/v1/contacts', { token, body: { email } });
  expect(res.status).toBe(201);
  return (await res.json()).id as string;
}

async function organization(tenantId: string, externalId: string) {
  const res = await svc.admin(`/tenants/${tenantId}/organizations`, { externalId });
  expect(res.status).toBe(201);
}

async function resolve(tenantId: string, items: unknown[]) {
  const res = await svc.resolve({ tenantId, items });
  expect(res.status).toBe(200);
  return (await res.json()).items as Array<{
    contactId: string | null;
    organizationExists: boolean | null;
  }>;
}

/** A tenant with a Contact by externalId, an email-only Contact and an organization. */
async function world() {
  const { tenantId, token } = svc.newTenant();
  const email = uniqueEmail('withext');
  const looseEmail = uniqueEmail('loose');
  const withExternalId = await put(token, 'ext-1', email);
  const emailOnly = await post(token, looseEmail);
  await organization(tenantId, 'org-1');
  return { tenantId, token, email, looseEmail, withExternalId, emailOnly };
}

describe('resolving identities', () => {
  it('when a batch mixes every kind of identity, then each item is answered in request order', async () => {
    const w = await world();

    const items = await resolve(w.tenantId, [
      { contactId: w.withExternalId },
      { contactExternalId: 'ext-1' },
      { contactEmail: w.looseEmail },
      { organizationExternalId: 'org-1' },
      { contactId: w.emailOnly, organizationExternalId: 'org-1' },
      { contactExternalId: 'ext-1', organizationExternalId: 'org-unknown' },
      { contactId: randomUUID() },
      { contactExternalId: 'ext-unknown' },
      { contactEmail: 'nobody@example.com' },
      { organizationExternalId: 'org-unknown' },
      {},
    ]);

    expect(items).toStrictEqual([
      { contactId: w.withExternalId, organizationExists: null },
      { contactId: w.withExternalId, organizationExists: null },
      { contactId: w.emailOnly, organizationExists: null },
      { contactId: null, organizationExists: true },
      { contactId: w.emailOnly, organizationExists: true },
      { contactId: w.withExternalId, organizationExists: false },
      { contactId: null, organizationExists: null },
      { contactId: null, organizationExists: null },
      { contactId: null, organizationExists: null },
      { contactId: null, organizationExists: false },
      { contactId: null, organizationExists: null },
    ]);
  });

  it('when a Contact with an externalId is named by its email, then it resolves too', async () => {
    const w = await world();

    expect(await resolve(w.tenantId, [{ contactEmail: w.email }])).toEqual([
      { contactId: w.withExternalId, organizationExists: null },
    ]);
  });

  it('when the email is written in another case, then it resolves (case-insensitive)', async () => {
    const w = await world();

    const items = await resolve(w.tenantId, [
      { contactEmail: w.looseEmail.toUpperCase() },
      { contactEmail: w.email.replace(/^./, (c) => c.toUpperCase()) },
    ]);

    expect(items.map((i) => i.contactId)).toEqual([w.emailOnly, w.withExternalId]);
  });

  it('when the contactId is in upper case, then it resolves to the id in its canonical form', async () => {
    const w = await world();

    expect(await resolve(w.tenantId, [{ contactId: w.withExternalId.toUpperCase() }])).toEqual([
      { contactId: w.withExternalId, organizationExists: null },
    ]);
  });

  it('when the externalId or organization differ only in case, then they do not resolve (exact match)', async () => {
    const w = await world();

    expect(
      await resolve(w.tenantId, [
        { contactExternalId: 'EXT-1' },
        { organizationExternalId: 'ORG-1' },
      ]),
    ).toEqual([
      { contactId: null, organizationExists: null },
      { contactId: null, organizationExists: false },
    ]);
  });

  it.each([
    ['not a uuid', 'not-a-uuid'],
    ['empty', ''],
    ['a uuid with extra characters', `${randomUUID()}0`],
    ['U+0000', '\u0000'],
  ])('when the contactId is %s, then it resolves to null, not an error', async (_, contactId) => {
    const w = await world();

    expect(await resolve(w.tenantId, [{ contactId }, { contactId: w.emailOnly }])).toEqual([
      { contactId: null, organizationExists: null },
      { contactId: w.emailOnly, organizationExists: null },
    ]);
  });

  it('when values no Contact or organization can hold are named (U+0000, empty strings), then they resolve to nothing, never a 500', async () => {
    const w = await world();

    const items = await resolve(w.tenantId, [
      { contactExternalId: 'ext\u0000-1' },
      { contactEmail: `a\u0000${w.email}` },
      { organizationExternalId: 'org\u0000-1' },
      { contactExternalId: '' },
      { contactEmail: '' },
      { organizationExternalId: '' },
      { contactExternalId: 'ext-1' },
    ]);

    expect(items).toEqual([
      { contactId: null, organizationExists: null },
      { contactId: null, organizationExists: null },
      { contactId: null, organizationExists: false },
      { contactId: null, organizationExists: null },
      { contactId: null, organizationExists: null },
      { contactId: null, organizationExists: false },
      { contactId: w.withExternalId, organizationExists: null },
    ]);
  });

  it('when a value holds an unpaired surrogate, then 400 naming it: the one answer would be for its U+FFFD form', async () => {
    const w = await world();

    const res = await svc.resolve({
      tenantId: w.tenantId,
      items: [{ contactExternalId: 'ext-1' }, { contactEmail: `lone\ud800${w.email}` }],
    });

    expect({ status: res.status, body: await res.json() }).toStrictEqual({
      status: 400,
      body: {
        code: 'validation_error',
        message:
          'body.items[1].contactEmail: must be well-formed Unicode, without an unpaired surrogate',
      },
    });
  });

  it("when another tenant's Contacts and organizations are named, then nothing resolves", async () => {
    const a = await world();
    const b = svc.newTenant();

    const items = await resolve(b.tenantId, [
      { contactId: a.withExternalId },
      { contactExternalId: 'ext-1' },
      { contactEmail: a.looseEmail },
      { organizationExternalId: 'org-1' },
    ]);

    expect(items).toEqual([
      { contactId: null, organizationExists: null },
      { contactId: null, organizationExists: null },
      { contactId: null, organizationExists: null },
      { contactId: null, organizationExists: false },
    ]);
  });

  it('when two tenants hold the same externalId and email, then each resolves to its own Contact', async () => {
    const a = svc.newTenant();
    const b = svc.newTenant();
    const email = uniqueEmail();
    const inA = await put(a.token, 'same', email);
    const inB = await put(b.token, 'same', email);

    const fromA = await resolve(a.tenantId, [
      { contactExternalId: 'same' },
      { contactEmail: email },
    ]);
    const fromB = await resolve(b.tenantId, [
      { contactExternalId: 'same' },
      { contactEmail: email },
    ]);

    expect(fromA.map((i) => i.contactId)).toEqual([inA, inA]);
    expect(fromB.map((i) => i.contactId)).toEqual([inB, inB]);
  });

  it('when the same identity is named many times, then every item is answered', async () => {
    const w = await world();

    const items = await resolve(
      w.tenantId,
      Array.from({ length: 1000 }, (_, i) =>
        i % 2 === 0 ? { contactExternalId: 'ext-1' } : { contactEmail: w.looseEmail },
      ),
    );

    expect(items).toHaveLength(1000);
    expect(items[998]).toEqual({ contactId: w.withExternalId, organizationExists: null });
    expect(items[999]).toEqual({ contactId: w.emailOnly, organizationExists: null });
  });

  it('when the batch is empty, then the answer is empty', async () => {
    const { tenantId } = svc.newTenant();

    expect(await resolve(tenantId, [])).toEqual([]);
  });

  it('when the tenant has nothing, then every item resolves to nothing', async () => {
    expect(
      await resolve(randomUUID(), [
        { contactExternalId: 'ext-1' },
        { organizationExternalId: 'o' },
      ]),
    ).toEqual([
      { contactId: null, organizationExists: null },
      { contactId: null, organizationExists: false },
    ]);
  });

  it('when a Contact gains an externalId, then both its email and the externalId resolve to its id', async () => {
    const { tenantId, token } = svc.newTenant();
    const email = uniqueEmail();
    const id = await post(token, email);
    await svc.request('PUT', '/v1/contacts/claimed', { token, body: { email } });

    expect(
      (await resolve(tenantId, [{ contactExternalId: 'claimed' }, { contactEmail: email }])).map(
        (i) => i.contactId,
      ),
    ).toEqual([id, id]);
  });
});

describe('the lookups', () => {
  /** Records every statement the domain function sends, so each can be explained afterwards. */
  function recordingPool(pool: Pool) {
    const statements: Array<{ text: string; values: unknown[] }> = [];
    const recording = {
      query: (config: { text: string; values: unknown[] }) => {
        statements.push({ text: config.text, values: config.values });
        return pool.query(config);
      },
    } as unknown as Pool;
    return { recording, statements };
  }

  it('when a batch names every kind of identity, then one query per kind runs, each one backed by an index', async () => {
    const w = await world();
    const { recording, statements } = recordingPool(svc.pool);

    await resolveIdentities(recording, {
      tenantId: w.tenantId,
      items: [
        { contactId: w.withExternalId },
        { contactExternalId: 'ext-1' },
        { contactEmail: w.looseEmail },
        { organizationExternalId: 'org-1' },
        { contactId: randomUUID(), contactExternalId: 'x', organizationExternalId: 'org-2' },
      ],
    });

    expect(statements).toHaveLength(4);
    const client = await svc.pool.connect();
    try {
      await client.query('begin');
      // With sequential scans priced out, a plan without one proves an index can serve it.
      await client.query('set local enable_seqscan = off');
      for (const { text, values } of statements) {
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(`explain ${text}`, values);
        const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
        expect(plan).not.toMatch(/Seq Scan/);
        expect(plan).toMatch(/Index (Only )?Scan|Bitmap Index Scan/);
      }
    } finally {
      await client.query('rollback');
      client.release();
    }
  });

  it('when a batch names no identity of a kind, then no query runs for that kind', async () => {
    const w = await world();
    const { recording, statements } = recordingPool(svc.pool);

    await resolveIdentities(recording, {
      tenantId: w.tenantId,
      items: [{ contactExternalId: 'ext-1' }],
    });

    expect(statements).toHaveLength(1);
  });
});

describe('the identity lookups pool', () => {
  it('when identities are resolved again and again, with arrays of every length, then each kind of lookup is planned once for any values', async () => {
    // One connection, so the statements it prepared are the ones seen here.
    const one = await startContactsService({ identityPoolMax: 1 });
    try {
      for (let n = 1; n <= 8; n += 1) {
        const items = Array.from({ length: n }, (_, i) => [
          { contactId: randomUUID() },
          { contactExternalId: `ext-${n}-${i}` },
          { contactEmail: uniqueEmail() },
          { organizationExternalId: `org-${n}-${i}` },
        ]).flat();
        const res = await one.resolve({ tenantId: randomUUID(), items });
        expect(res.status).toBe(200);
      }

      const { rows } = await one.identityPool.query<{
        name: string;
        generic_plans: string;
        custom_plans: string;
      }>(
        `select name, generic_plans, custom_plans from pg_prepared_statements
         where name like 'contacts.%' order by name`,
      );
      expect(rows.map((r) => [r.name, Number(r.generic_plans), Number(r.custom_plans)])).toEqual([
        ['contacts.existing_organizations.1', 8, 0],
        ['contacts.identity_emails.1', 8, 0],
        ['contacts.identity_external_ids.1', 8, 0],
        ['contacts.identity_ids.1', 8, 0],
      ]);
    } finally {
      await one.close();
    }
  });
});

describe('the route', () => {
  it('when the service token is missing, then 401 unauthenticated', async () => {
    const res = await fetch(`${svc.url}/internal/v1/identities/resolve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tenantId: randomUUID(), items: [] }),
    });

    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: 'unauthenticated' });
  });

  it("when a customer's access token (any scope), the admin token or a wrong token is sent, then 401 unauthenticated", async () => {
    const w = await world();
    const customer = svc.tokenFor(w.tenantId); // every scope

    for (const token of [customer, ADMIN_TOKEN, 'not-the-service-token']) {
      const res = await svc.resolve(
        { tenantId: w.tenantId, items: [{ contactId: w.emailOnly }] },
        token,
      );

      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 'unauthenticated' });
    }
  });

  it('when the service token guards /internal, then an unknown internal route is 401 without it, 404 with it', async () => {
    const without = await fetch(`${svc.url}/internal/v1/nothing-here`);
    const withToken = await svc.request('GET', '/internal/v1/nothing-here', {
      token: SERVICE_TOKEN,
    });

    expect(without.status).toBe(401);
    expect(withToken.status).toBe(404);
  });

  it.each([
    ['no tenantId', { items: [] }],
    ['a tenantId that is not a uuid', { tenantId: 'tenant-1', items: [] }],
    ['no items', { tenantId: randomUUID() }],
    ['items that are not an array', { tenantId: randomUUID(), items: { contactId: 'x' } }],
    ['an item that is not an object', { tenantId: randomUUID(), items: ['x'] }],
    ['an identity that is not a string', { tenantId: randomUUID(), items: [{ contactId: 42 }] }],
    [
      'more than 1,000 items',
      { tenantId: randomUUID(), items: Array.from({ length: 1001 }, () => ({})) },
    ],
    ['an array body', [{ tenantId: randomUUID(), items: [] }]],
  ])('when the body has %s, then 400 validation_error', async (_, body) => {
    const res = await svc.resolve(body);

    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'validation_error' });
  });

  it('when the method is GET, then 405 with Allow POST', async () => {
    const res = await svc.request('GET', '/internal/v1/identities/resolve', {
      token: SERVICE_TOKEN,
    });

    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });
});
