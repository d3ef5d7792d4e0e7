// The operator's routes about a Tenant's organizations and Contacts: listing organizations, and
// looking up, exporting and erasing one Contact with the admin token, the Tenant in the path.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  ADMIN_TOKEN,
  startContactsService,
  uniqueEmail,
  type TestContactsService,
} from '../support.js';

let svc: TestContactsService;
beforeAll(async () => {
  svc = await startContactsService();
});
afterAll(() => svc.close());

const operator = (method: string, path: string, token = ADMIN_TOKEN) =>
  svc.request(method, `/admin/v1/tenants${path}`, { token });

interface OrganizationPage {
  organizations: { externalId: string; name: string | null; createdAt: string }[];
  nextCursor: string | null;
}

async function newContact(tenantId: string, externalId: string, email: string) {
  const res = await svc.request('PUT', `/v1/contacts/${encodeURIComponent(externalId)}`, {
    token: svc.tokenFor(tenantId, ['contacts:write']),
    body: { email, name: 'Ada' },
  });
  expect(res.status).toBe(201);
  return res.json<{ id: string; externalId: string; email: string }>();
}

describe("listing a Tenant's organizations", () => {
  it('when it has five, then pages of two give them in externalId order, each once, the last page without a cursor', async () => {
    const { tenantId } = svc.newTenant();
    for (const id of ['org-e', 'org-a', 'org/c', 'org-b', 'org-d']) {
      expect(
        (await svc.admin(`/tenants/${tenantId}/organizations`, { externalId: id })).status,
      ).toBe(201);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `?limit=2&cursor=${cursor}` : '?limit=2';
      const res = await operator('GET', `/${tenantId}/organizations${query}`);
      expect(res.status).toBe(200);
      const page = await res.json<OrganizationPage>();
      expect(page.organizations.length).toBeLessThanOrEqual(2);
      seen.push(...page.organizations.map((o) => o.externalId));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== null && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual([...seen].sort());
    expect(seen.sort()).toEqual(['org-a', 'org-b', 'org-d', 'org-e', 'org/c'].sort());
  });

  it('when it has none, then an empty page; an unknown Tenant is 404; a bad limit or cursor is 400', async () => {
    const { tenantId } = svc.newTenant();
    expect(await (await operator('GET', `/${tenantId}/organizations`)).json()).toEqual({
      organizations: [],
      nextCursor: null,
    });
    expect((await operator('GET', `/${randomUUID()}/organizations`)).status).toBe(404);
    const cursorOf = (text: string) => Buffer.from(text).toString('base64url');
    for (const query of [
      'limit=0',
      'limit=101',
      'cursor=',
      `cursor=${'x'.repeat(2100)}`,
      // no organization has an externalId with U+0000: no cursor of this list names one
      `cursor=${cursorOf('org\u0000x')}`,
    ]) {
      const res = await operator('GET', `/${tenantId}/organizations?${query}`);
      expect([query, res.status]).toEqual([query, 400]);
    }
  });

  it('when the admin token is wrong, then 401', async () => {
    const { tenantId } = svc.newTenant();
    expect((await operator('GET', `/${tenantId}/organizations`, 'nope')).status).toBe(401);
  });

  it('when externalIds are 255 characters of four UTF-8 bytes each, then the cursors the list gives page through them', async () => {
    const { tenantId } = svc.newTenant();
    // 😀 is two UTF-16 units: 127 of them and one more letter make 255 characters
    const ids = ['a', 'b', 'c'].map((letter) => `${letter}${'😀'.repeat(127)}`);
    for (const externalId of ids) {
      expect((await svc.admin(`/tenants/${tenantId}/organizations`, { externalId })).status).toBe(
        201,
      );
    }
    const first = await (
      await operator('GET', `/${tenantId}/organizations?limit=1`)
    ).json<OrganizationPage>();
    expect(first.nextCursor!.length).toBeGreaterThan(512);
    const second = await operator(
      'GET',
      `/${tenantId}/organizations?limit=1&cursor=${first.nextCursor}`,
    );
    expect(second.status).toBe(200);
    expect((await second.json<OrganizationPage>()).organizations[0]!.externalId).toBe(ids[1]);
  });
});

describe('looking up, exporting and erasing a Contact as the operator', () => {
  it('when searched by its externalId, its email in another case, or its id, then the Contact; by nothing or by an identity no Contact has, 400 and an empty list', async () => {
    const { tenantId } = svc.newTenant();
    const email = uniqueEmail();
    const contact = await newContact(tenantId, 'ext/1', email);

    for (const identity of ['ext/1', email.toUpperCase(), contact.id, contact.id.toUpperCase()]) {
      const res = await operator(
        'GET',
        `/${tenantId}/contacts?identity=${encodeURIComponent(identity)}`,
      );
      expect([identity, res.status]).toEqual([identity, 200]);
      expect(await res.json()).toMatchObject({
        contacts: [{ id: contact.id, externalId: 'ext/1', email }],
      });
    }
    for (const identity of [
      'nobody',
      'a\u0000b',
      'nobody@example.com',
      '00000000-0000-0000-0000-000000000000',
    ]) {
      const res = await operator(
        'GET',
        `/${tenantId}/contacts?identity=${encodeURIComponent(identity)}`,
      );
      expect(await res.json()).toEqual({ contacts: [] });
    }
    for (const query of ['', 'identity=', `identity=${'x'.repeat(257)}`, 'identity=a&identity=b']) {
      const res = await operator('GET', `/${tenantId}/contacts?${query}`);
      expect([query, res.status]).toEqual([query, 400]);
      expect(await res.json()).toMatchObject({ code: 'validation_error' });
    }
  });

  it("when one Contact's externalId is another's email, then searching it finds both, oldest first", async () => {
    const { tenantId } = svc.newTenant();
    const email = uniqueEmail();
    const first = await newContact(tenantId, email, uniqueEmail());
    const second = await newContact(tenantId, 'ext-other', email);
    const res = await operator(
      'GET',
      `/${tenantId}/contacts?identity=${encodeURIComponent(email)}`,
    );
    expect((await res.json<{ contacts: { id: string }[] }>()).contacts.map((c) => c.id)).toEqual([
      first.id,
      second.id,
    ]);
  });

  it("when another Tenant's path names the Contact, then its search finds nothing, its export and erasure are 404, and the Contact stays", async () => {
    const { tenantId } = svc.newTenant();
    const other = svc.newTenant().tenantId;
    const contact = await newContact(tenantId, 'ext-2', uniqueEmail());

    expect(
      await (await operator('GET', `/${other}/contacts?identity=${contact.id}`)).json(),
    ).toEqual({
      contacts: [],
    });
    expect((await operator('GET', `/${other}/contacts/${contact.id}/export`)).status).toBe(404);
    expect((await operator('POST', `/${other}/contacts/${contact.id}/erase`)).status).toBe(404);
    expect(
      (
        await (
          await operator('GET', `/${tenantId}/contacts?identity=${contact.id}`)
        ).json<{ contacts: unknown[] }>()
      ).contacts,
    ).toHaveLength(1);
  });

  it('when exported, then the JSON Lines file starts with the Contact; when erased, then 204 and it is gone', async () => {
    const { tenantId } = svc.newTenant();
    const contact = await newContact(tenantId, 'ext-3', uniqueEmail());

    const exported = await operator('GET', `/${tenantId}/contacts/${contact.id}/export`);
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const [first] = (await exported.text()).trim().split('\n');
    expect(JSON.parse(first!)).toMatchObject({ type: 'contact', data: { id: contact.id } });

    const erased = await operator('POST', `/${tenantId}/contacts/${contact.id}/erase`);
    expect(erased.status).toBe(204);
    expect(
      await (await operator('GET', `/${tenantId}/contacts?identity=${contact.id}`)).json(),
    ).toEqual({
      contacts: [],
    });
  });

  it('when the admin token is missing, then 401 and nothing is erased', async () => {
    const { tenantId } = svc.newTenant();
    const contact = await newContact(tenantId, 'ext-4', uniqueEmail());
    const res = await svc.request(
      'POST',
      `/admin/v1/tenants/${tenantId}/contacts/${contact.id}/erase`,
    );
    expect(res.status).toBe(401);
    expect(
      (
        await (
          await operator('GET', `/${tenantId}/contacts?identity=${contact.id}`)
        ).json<{ contacts: unknown[] }>()
      ).contacts,
    ).toHaveLength(1);
  });
});
