// The events benchmark's setting: a fresh Tenant with keys, tokens, Contacts and organizations
// made through the API, and the floor's scratch database with the events service's schema and
// the bare INSERT it runs there.
import path from 'node:path';
import { createPool, runMigrations } from '@herald/db';
import { databaseUrl } from '@herald/stack/index.mjs';
import { CONTACTS, EVENT_NAME, KEYS, ORGANIZATIONS, PROPERTIES } from './events-measurements.mjs';

/**
 * The bench Tenant: its keys, their access tokens (exchanged again by `refresh()`), its
 * Contacts and its organizations' externalIds.
 * @typedef {object} BenchTenant
 * @property {string} tenantId
 * @property {Record<string, string>[]} keys as the operator API answered: clientId, secret, …
 * @property {{ list: string[], at: number, refresh: () => Promise<void> }} tokens
 * @property {{ id: string, externalId: string, email: string }[]} contacts
 * @property {string[]} organizations
 */
/**
 * The floor's database: its URL, and `drop()`.
 * @typedef {{ url: string, drop: () => Promise<void> }} FloorDatabase
 */

/**
 * The JSON answer of `request()` (a fetch), which must be 2xx. A 5xx or a refused connection is
 * tried again for up to 30 s: others restart the services on a shared machine.
 * @param {() => Promise<Response>} request
 * @param {string} what
 * @returns {Promise<Record<string, string>>} the answer, of which only string fields are read
 *   (a Tenant's or Contact's id, a key's clientId and secret, an accessToken)
 */
async function expectOk(request, what) {
  const deadline = Date.now() + 30000;
  for (;;) {
    let res;
    try {
      res = await request();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 1000));
      continue;
    }
    if (res.ok) return /** @type {Promise<Record<string, string>>} */ (res.json());
    const body = await res.text();
    if (res.status < 500 || Date.now() > deadline) {
      throw new Error(`${what} answered ${res.status}: ${body}`);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/**
 * Runs `fn` over `items`, `limit` at a time.
 * @template T, U
 * @param {T[]} items
 * @param {number} limit
 * @param {(item: T, index: number) => Promise<U>} fn
 * @returns {Promise<U[]>}
 */
async function inParallel(items, limit, fn) {
  const out = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  return out;
}

/**
 * A fresh Tenant with KEYS keys (Events, Contact writes and reads) and their access tokens,
 * CONTACTS Contacts created through the API, and ORGANIZATIONS organizations through the
 * operator API.
 * @param {string} ingressUrl
 * @param {string} adminToken
 * @param {string} runId
 * @returns {Promise<BenchTenant>}
 */
export async function setUp(ingressUrl, adminToken, runId) {
  /** @type {(route: string, body: object) => Promise<Response>} */
  const admin = (route, body) =>
    fetch(`${ingressUrl}/admin/v1${route}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const tenant = await expectOk(() => admin('/tenants', { name: `bench ${runId}` }), 'tenant');
  const keys = await inParallel(Array.from({ length: KEYS }), 8, async () =>
    expectOk(
      () =>
        admin(`/tenants/${tenant.id}/api-keys`, {
          kind: 'secret',
          name: 'bench',
          scopes: ['events:write', 'contacts:write', 'contacts:read'],
        }),
      'key create',
    ),
  );
  const tokens = {
    list: [],
    at: 0,
    async refresh() {
      this.list = await inParallel(keys, 4, async (key) => {
        const basic = Buffer.from(`${key.clientId}:${key.secret}`).toString('base64');
        const exchange = () =>
          fetch(`${ingressUrl}/v1/token`, {
            method: 'POST',
            headers: { authorization: `Basic ${basic}` },
          });
        return (await expectOk(exchange, 'token exchange')).accessToken;
      });
      this.at = Date.now();
    },
  };
  await tokens.refresh();
  const contacts = await inParallel(Array.from({ length: CONTACTS }), 16, async (_, i) => {
    const externalId = `bench-${runId}-${i}`;
    const email = `bench-${runId}-${i}@example.com`;
    const contact = await expectOk(
      () =>
        fetch(`${ingressUrl}/v1/contacts/${externalId}`, {
          method: 'PUT',
          headers: {
            authorization: `Bearer ${tokens.list[i % KEYS]}`,
            'content-type': 'application/json',
          },
          body: JSON.stringify({ email }),
        }),
      'contact create',
    );
    return { id: contact.id, externalId, email };
  });
  const organizations = [];
  for (let i = 0; i < ORGANIZATIONS; i += 1) {
    const externalId = `bench-org-${runId}-${i}`;
    await expectOk(
      () => admin(`/tenants/${tenant.id}/organizations`, { externalId, name: `Bench ${i}` }),
      'organization create',
    );
    organizations.push(externalId);
  }
  return { tenantId: tenant.id, keys, tokens, contacts, organizations };
}

/**
 * A scratch database holding the events service's own schema (its migrations, applied in
 * order), so the floor writes to a table with exactly the service's columns and indexes.
 * @param {typeof import('pg').default} pg
 * @param {string} repoRoot
 * @param {string} runId
 * @returns {Promise<FloorDatabase>}
 */
export async function floorDatabase(pg, repoRoot, runId) {
  const dbName = `herald_bench_${runId}`;
  const adminClient = new pg.Client({ connectionString: databaseUrl('postgres') });
  await adminClient.connect();
  try {
    await adminClient.query(`create database ${dbName}`);
  } finally {
    await adminClient.end();
  }
  // The service's own runner: some migrations are not plain SQL (a statement run once per
  // partition, concurrent index builds outside a transaction).
  const pool = createPool({
    connectionString: databaseUrl(dbName),
    applicationName: 'bench-floor',
    max: 1,
  });
  try {
    await runMigrations(pool, path.join(repoRoot, 'services/events/migrations'));
  } finally {
    await pool.end();
  }
  return {
    url: databaseUrl(dbName),
    async drop() {
      const c = new pg.Client({ connectionString: databaseUrl('postgres') });
      await c.connect();
      try {
        await c.query(`drop database if exists ${dbName} with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * One multi-row INSERT of the rows the service stores for `n` Events, with ids made as the
 * service makes them (`newId`, time-ordered).
 * @param {string} tenantId
 * @param {{ id: string }[]} contacts
 * @param {number} n
 * @param {() => string} nextKey the next dedupKey
 * @param {() => string} newId
 */
export function insertStatement(tenantId, contacts, n, nextKey, newId) {
  const params = [];
  const occurredAt = new Date().toISOString();
  const properties = JSON.stringify(PROPERTIES);
  const tuples = [];
  for (let i = 0; i < n; i += 1) {
    const at = params.length;
    params.push(
      newId(),
      tenantId,
      contacts[i % contacts.length].id,
      EVENT_NAME,
      occurredAt,
      nextKey(),
      properties,
    );
    tuples.push(`(${Array.from({ length: 7 }, (_, j) => `$${at + j + 1}`).join(', ')})`);
  }
  return {
    text: `insert into events (id, tenant_id, contact_id, event_name, occurred_at, dedup_key, properties) values ${tuples.join(', ')}`,
    values: params,
  };
}
