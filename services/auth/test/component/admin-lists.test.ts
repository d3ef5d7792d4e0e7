import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN_TOKEN, startAuthService, type TestAuthService } from '../support.js';

let auth: TestAuthService;
beforeAll(async () => {
  auth = await startAuthService();
});
afterAll(() => auth.close());

interface Tenant {
  id: string;
  name: string;
  createdAt: string;
}
interface Page {
  tenants: Tenant[];
  nextCursor: string | null;
}

const get = (path: string) => auth.request('GET', `/admin/v1${path}`, { token: ADMIN_TOKEN });

async function newTenant(name: string): Promise<Tenant> {
  const res = await auth.admin('/tenants', { name });
  expect(res.status).toBe(201);
  return res.json<Tenant>();
}

async function page(query: Record<string, string>): Promise<Page> {
  const res = await get(`/tenants?${new URLSearchParams(query).toString()}`);
  expect(res.status).toBe(200);
  return res.json<Page>();
}

// Other test files create Tenants in the same database meanwhile: each test lists only the
// Tenants of a marker of its own.
describe('operator API: listing Tenants', () => {
  it('when three Tenants match, then pages of two give them newest first, the second page by the first one’s cursor, and the last page has no cursor', async () => {
    const marker = `pages ${randomUUID()}`;
    const made = [];
    for (const suffix of ['a', 'b', 'c']) made.push(await newTenant(`${marker} ${suffix}`));

    const first = await page({ search: marker, limit: '2' });
    expect(first.tenants).toEqual([made[2], made[1]]);
    expect(first.nextCursor).toEqual(expect.any(String));

    const second = await page({ search: marker, limit: '2', cursor: first.nextCursor as string });
    expect(second).toEqual({ tenants: [made[0]], nextCursor: null });
  });

  it('when Tenants are made within one millisecond of each other, then paging one by one gives each exactly once', async () => {
    const marker = `burst ${randomUUID()}`;
    const made = await Promise.all(
      Array.from({ length: 6 }, (_, i) => newTenant(`${marker} ${i}`)),
    );
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const p: Page = await page({ search: marker, limit: '1', ...(cursor ? { cursor } : {}) });
      seen.push(...p.tenants.map((t) => t.id));
      cursor = p.nextCursor;
    } while (cursor !== null && seen.length < 20);
    expect(seen.sort()).toEqual(made.map((t) => t.id).sort());
  });

  it('when searching, then any case of a part of the name matches, the whole id matches, and % and _ stand for themselves', async () => {
    const marker = `Search ${randomUUID()}`;
    const percent = await newTenant(`${marker} 100% off`);
    const plain = await newTenant(`${marker} 100 pct`);

    expect((await page({ search: marker.toUpperCase() })).tenants).toHaveLength(2);
    expect((await page({ search: `${marker} 100%` })).tenants).toEqual([percent]);
    expect((await page({ search: `${marker} 100_` })).tenants).toEqual([]);
    expect((await page({ search: plain.id })).tenants).toEqual([plain]);
    expect((await page({ search: plain.id.toUpperCase() })).tenants).toEqual([plain]);
  });

  it('when a Tenant is being deleted, then it is neither listed nor found', async () => {
    const marker = `leaving ${randomUUID()}`;
    const tenant = await newTenant(marker);
    const deletion = await auth.request(
      'DELETE',
      `/admin/v1/tenants/${tenant.id}?confirm=${tenant.id}`,
      { token: ADMIN_TOKEN },
    );
    expect(deletion.status).toBe(202);

    expect((await page({ search: marker })).tenants).toEqual([]);
    expect((await get(`/tenants/${tenant.id}`)).status).toBe(404);
  });

  it.each([
    ['limit=0', 'query.limit'],
    ['limit=101', 'query.limit'],
    ['limit=ten', 'query.limit'],
    ['limit=2.5', 'query.limit'],
    ['search=a&search=b', 'query.search'],
    [`search=${'x'.repeat(257)}`, 'query.search'],
    ['cursor=not-a-cursor', 'query.cursor'],
    [`cursor=${Buffer.from(`1.${randomUUID()}x`).toString('base64url')}`, 'query.cursor'],
    // microseconds past bigint and timestamptz: refused, not a database error
    [
      `cursor=${Buffer.from(`${'9'.repeat(20)}.${randomUUID()}`).toString('base64url')}`,
      'query.cursor',
    ],
  ])('when the query is %s, then 400 validation_error naming %s', async (query, field) => {
    const res = await get(`/tenants?${query}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      code: 'validation_error',
      message: expect.stringMatching(new RegExp(`^${field.replace('.', '\\.')}: `)),
    });
  });

  it('when the admin token is missing or wrong, then 401 and no Tenant is shown', async () => {
    for (const token of [undefined, 'nope']) {
      const res = await auth.request('GET', '/admin/v1/tenants', { token });
      expect(res.status).toBe(401);
      expect(JSON.stringify(await res.json())).not.toContain('"tenants"');
    }
  });
});

describe('operator API: one Tenant', () => {
  it('when it exists, then 200 with its id, name and createdAt; an unknown or malformed id is 404', async () => {
    const tenant = await newTenant(`one ${randomUUID()}`);
    const res = await get(`/tenants/${tenant.id}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(tenant);

    for (const id of [randomUUID(), 'not-a-uuid']) {
      const missing = await get(`/tenants/${id}`);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toEqual({ code: 'not_found', message: 'no such tenant' });
    }
  });
});

describe("operator API: a Tenant's keys", () => {
  it('when it has a revoked secret key and a publishable key, then both are listed newest first, with revokedAt and the publishable rules, and never a secret', async () => {
    const tenant = await newTenant(`keys ${randomUUID()}`);
    const secret = await (
      await auth.admin(`/tenants/${tenant.id}/api-keys`, { kind: 'secret', name: 'backend' })
    ).json<{ clientId: string; secret: string }>();
    const publishable = await (
      await auth.admin(`/tenants/${tenant.id}/api-keys`, {
        kind: 'publishable',
        allowedOrigins: ['https://shop.example.com'],
      })
    ).json<{ clientId: string }>();
    const revoked = await auth.admin(`/tenants/${tenant.id}/api-keys/${secret.clientId}/revoke`);
    expect(revoked.status).toBe(204);

    const res = await get(`/tenants/${tenant.id}/api-keys`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain(secret.secret);
    expect(JSON.parse(text)).toEqual({
      apiKeys: [
        {
          clientId: publishable.clientId,
          kind: 'publishable',
          name: null,
          scopes: ['events:write'],
          identifierLookup: false,
          allowedOrigins: ['https://shop.example.com'],
          createdAt: expect.any(String),
          revokedAt: null,
        },
        {
          clientId: secret.clientId,
          kind: 'secret',
          name: 'backend',
          scopes: expect.arrayContaining(['events:write']),
          createdAt: expect.any(String),
          revokedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        },
      ],
    });
  });

  it('when the Tenant has no keys, then an empty list; an unknown Tenant is 404', async () => {
    const tenant = await newTenant(`no keys ${randomUUID()}`);
    expect(await (await get(`/tenants/${tenant.id}/api-keys`)).json()).toEqual({ apiKeys: [] });
    expect((await get(`/tenants/${randomUUID()}/api-keys`)).status).toBe(404);
  });
});
