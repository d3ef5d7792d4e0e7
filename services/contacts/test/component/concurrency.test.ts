// Concurrent upserts of one new Contact: every answer a 200 or 201 (exactly one 201),
// never a 500 or a duplicate row.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startContactsService, uniqueEmail, type TestContactsService } from '../support.js';

let svc: TestContactsService;
beforeAll(async () => {
  svc = await startContactsService();
});
afterAll(() => svc.close());

const PARALLEL = 20;
const ROUNDS = 3;

const put = (token: string, externalId: string, body: unknown) =>
  svc.request('PUT', `/v1/contacts/${encodeURIComponent(externalId)}`, { token, body });
const post = (token: string, body: unknown) => svc.request('POST', '/v1/contacts', { token, body });

async function answers(requests: Array<Promise<Response>>) {
  return Promise.all(
    (await Promise.all(requests)).map(async (res) => ({
      status: res.status,
      body: await res.json(),
    })),
  );
}

async function rowsOf(tenantId: string) {
  const { rows } = await svc.pool.query<{ id: string; external_id: string | null; email: string }>(
    'select id, external_id, email from contacts where tenant_id = $1',
    [tenantId],
  );
  return rows;
}

async function createdMessages(tenantId: string) {
  const { rows } = await svc.pool.query(
    `select key from outbox
     where value::jsonb ->> 'tenantId' = $1 and value::jsonb ->> 'type' = 'contact.created'`,
    [tenantId],
  );
  return rows;
}

/** Exactly one 201, the rest 200, all naming one Contact. */
function expectOneCreated(results: Array<{ status: number; body: { id?: string } }>) {
  const statuses = results.map((r) => r.status);
  expect(statuses.filter((s) => s === 201)).toHaveLength(1);
  expect(statuses.filter((s) => s !== 201 && s !== 200)).toEqual([]);
  const ids = new Set(results.map((r) => r.body.id));
  expect(ids.size).toBe(1);
  return [...ids][0]!;
}

describe.each(Array.from({ length: ROUNDS }, (_, i) => i + 1))('round %i', () => {
  it(`when ${PARALLEL} PUTs of one new externalId race, then one 201, the rest 200, and one row`, async () => {
    const { tenantId, token } = svc.newTenant();
    const email = uniqueEmail('race-put');

    const results = await answers(
      Array.from({ length: PARALLEL }, (_, i) => put(token, 'racer', { email, name: `Name ${i}` })),
    );

    const id = expectOneCreated(results);
    expect(await rowsOf(tenantId)).toEqual([{ id, external_id: 'racer', email }]);
    expect(await createdMessages(tenantId)).toEqual([{ key: id }]);
  });

  it(`when ${PARALLEL} POSTs of one new email (in varying case) race, then one 201, the rest 200, and one row`, async () => {
    const { tenantId, token } = svc.newTenant();
    const email = uniqueEmail('race-post');
    const spell = (i: number) => (i % 2 === 0 ? email : email.toUpperCase());

    const results = await answers(
      Array.from({ length: PARALLEL }, (_, i) => post(token, { email: spell(i) })),
    );

    const id = expectOneCreated(results);
    const rows = await rowsOf(tenantId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id, external_id: null });
    expect(rows[0]!.email.toLowerCase()).toBe(email);
    expect(await createdMessages(tenantId)).toEqual([{ key: id }]);
  });

  it(`when ${PARALLEL} PUTs and POSTs of one new email race, then one 201, the rest 200, and one row that holds the externalId`, async () => {
    const { tenantId, token } = svc.newTenant();
    const email = uniqueEmail('race-mixed');

    const results = await answers(
      Array.from({ length: PARALLEL }, (_, i) =>
        i % 2 === 0 ? put(token, 'mixed', { email }) : post(token, { email }),
      ),
    );

    const id = expectOneCreated(results);
    expect(await rowsOf(tenantId)).toEqual([{ id, external_id: 'mixed', email }]);
    expect(await createdMessages(tenantId)).toEqual([{ key: id }]);
  });

  it(`when ${PARALLEL} PUTs of different new externalIds with one email race, then one 201, the rest 409 conflict, and one row`, async () => {
    const { tenantId, token } = svc.newTenant();
    const email = uniqueEmail('race-conflict');

    const results = await answers(
      Array.from({ length: PARALLEL }, (_, i) => put(token, `racer-${i}`, { email })),
    );

    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(PARALLEL - 1);
    expect(results.filter((r) => r.status === 409).every((r) => r.body.code === 'conflict')).toBe(
      true,
    );
    const winner = results.find((r) => r.status === 201)!.body;
    expect(await rowsOf(tenantId)).toEqual([
      { id: winner.id, external_id: winner.externalId, email },
    ]);
  });

  it(`when two Contacts swap emails with each other in parallel, then each answer is a 200 or 409, never a 500`, async () => {
    const { tenantId, token } = svc.newTenant();
    const [ex, ey] = [uniqueEmail('x'), uniqueEmail('y')];
    await put(token, 'x', { email: ex });
    await put(token, 'y', { email: ey });
    const before = await rowsOf(tenantId);

    const results = await answers([
      ...Array.from({ length: PARALLEL / 2 }, () => put(token, 'x', { email: ey })),
      ...Array.from({ length: PARALLEL / 2 }, () => put(token, 'y', { email: ex })),
    ]);

    expect(results.map((r) => r.status).filter((s) => s !== 409)).toEqual([]);
    expect(await rowsOf(tenantId)).toEqual(expect.arrayContaining(before));
  });
});
