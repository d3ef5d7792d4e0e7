// Recording Events through the ingress (single Events and 100-Event arrays), beside the floor
// measured in the same run: a bare PostgreSQL INSERT of the same rows into a table shaped like
// the events service's, from a pg Pool at the same concurrency. The service does more per
// request (token check, identity resolution through the contacts service, dedup claims, the
// event-name catalog, the outbox row), so the ratio says what all of that costs.
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { databaseUrl } from '../stack/index.mjs';
import { closedLoop, fmt } from './lib.mjs';

export const name = 'events';

const ROUTE = 'by-contact-id';
const BATCH = 100;
const PROPERTIES = { plan: 'pro', amount: 42.5, path: '/checkout', items: ['a-1', 'b-2'] };

async function expectOk(res, what) {
  if (!res.ok) throw new Error(`${what} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/**
 * A fresh tenant, `keys` keys that record Events and write Contacts, their tokens, one Contact.
 * Several keys: each has its own write budget (refilled at 100 requests/s), and the bench measures
 * the service, not one key's budget.
 */
async function setUp(ingressUrl, adminToken, keys) {
  const adminPost = (route, body) =>
    fetch(`${ingressUrl}/admin/v1${route}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const tenant = await expectOk(await adminPost('/tenants', { name: 'bench events' }), 'tenant');
  const tokens = [];
  for (let i = 0; i < keys; i += 1) tokens.push(await newToken(tenant.id));
  const accessToken = tokens[0];
  async function newToken(tenantId) {
    const key = await expectOk(
      await adminPost(`/tenants/${tenantId}/api-keys`, {
        kind: 'secret',
        name: 'bench',
        scopes: ['events:write', 'contacts:write'],
      }),
      'key create',
    );
    const basic = Buffer.from(`${key.clientId}:${key.secret}`).toString('base64');
    const exchanged = await expectOk(
      await fetch(`${ingressUrl}/v1/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${basic}` },
      }),
      'token exchange',
    );
    return exchanged.accessToken;
  }
  const contact = await expectOk(
    await fetch(`${ingressUrl}/v1/contacts/bench-${randomUUID()}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: `bench-${randomUUID()}@example.com` }),
    }),
    'contact create',
  );
  return { tenantId: tenant.id, tokens, contactId: contact.id };
}

/** Unique dedupKeys for the whole run, so no Event is skipped as a duplicate. */
const runId = randomBytes(4).toString('hex');
let sequence = 0;
const nextDedupKey = () => `bench-${runId}-${(sequence += 1)}`;

function events(contactId, n) {
  return Array.from({ length: n }, () => ({
    contactId,
    eventName: 'Bench Event',
    occurredAt: new Date().toISOString(),
    dedupKey: nextDedupKey(),
    properties: PROPERTIES,
  }));
}

/**
 * A scratch database holding the events service's own schema (its migrations, applied in
 * order), so the baseline writes to a table with exactly the service's columns and indexes.
 */
async function scratchDatabase(pg, repoRoot) {
  const name = `herald_bench_${runId}`;
  const adminClient = new pg.Client({ connectionString: databaseUrl('postgres') });
  await adminClient.connect();
  try {
    await adminClient.query(`create database ${name}`);
  } finally {
    await adminClient.end();
  }
  const dir = path.join(repoRoot, 'services/events/migrations');
  const client = new pg.Client({ connectionString: databaseUrl(name) });
  await client.connect();
  try {
    for (const file of fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.sql'))
      .sort()) {
      await client.query(fs.readFileSync(path.join(dir, file), 'utf8'));
    }
  } finally {
    await client.end();
  }
  return {
    url: databaseUrl(name),
    async drop() {
      const c = new pg.Client({ connectionString: databaseUrl('postgres') });
      await c.connect();
      try {
        await c.query(`drop database if exists ${name} with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** One multi-row INSERT of the rows the service stores for these Events. */
function insertStatement(tenantId, rows) {
  const params = [];
  const tuples = rows.map((e) => {
    const at = params.length;
    params.push(
      randomUUID(),
      tenantId,
      e.contactId,
      e.eventName,
      e.occurredAt,
      e.dedupKey,
      JSON.stringify(e.properties),
    );
    return `(${Array.from({ length: 7 }, (_, i) => `$${at + i + 1}`).join(', ')})`;
  });
  return {
    text: `insert into events (id, tenant_id, contact_id, event_name, occurred_at, dedup_key, properties) values ${tuples.join(', ')}`,
    values: params,
  };
}

export async function run({ ingressUrl, adminToken, repoRoot, seconds, concurrency }) {
  const { default: pg } = await import('pg');
  const { tenantId, tokens, contactId } = await setUp(ingressUrl, adminToken, concurrency);
  let turn = 0;

  let accepted = 0; // Events the service answered 202 for, warm-up included
  const post = (n) => async () => {
    try {
      const res = await fetch(`${ingressUrl}/v1/events/${ROUTE}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tokens[turn++ % tokens.length]}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify(n === 1 ? events(contactId, 1)[0] : events(contactId, n)),
      });
      const body = await res.json();
      if (res.status !== 202 || body.accepted !== n) return false;
      accepted += n;
      return true;
    } catch {
      return false;
    }
  };

  // Each baseline right beside its service measurement, so both see the same machine.
  const scratch = await scratchDatabase(pg, repoRoot);
  const pool = new pg.Pool({ connectionString: scratch.url, max: concurrency });
  const insert = (n) => async () => {
    await pool.query(insertStatement(tenantId, events(contactId, n)));
    return true;
  };
  const loadBefore = os.loadavg()[0];
  const bare = {};
  const service = {};
  try {
    bare.single = await closedLoop({ request: insert(1), concurrency, seconds });
    service.single = await closedLoop({ request: post(1), concurrency, seconds });
    bare.batch = await closedLoop({ request: insert(BATCH), concurrency, seconds });
    service.batch = await closedLoop({ request: post(BATCH), concurrency, seconds });
  } finally {
    await pool.end();
    await scratch.drop();
  }
  const loadAfter = os.loadavg()[0];

  // Every accepted Event is recorded: unique dedupKeys, nothing skipped.
  const db = new pg.Client({ connectionString: databaseUrl('herald_events') });
  await db.connect();
  let recorded;
  try {
    const { rows } = await db.query('select count(*)::int as n from events where tenant_id = $1', [
      tenantId,
    ]);
    recorded = rows[0].n;
  } finally {
    await db.end();
  }

  const perEvent = (r, n) => ({ ...r, eventsPerSecond: ((r.count - r.unexpected) * n) / seconds });
  const results = {
    bareSingle: perEvent(bare.single, 1),
    bareBatch: perEvent(bare.batch, BATCH),
    serviceSingle: perEvent(service.single, 1),
    serviceBatch: perEvent(service.batch, BATCH),
    accepted,
    recorded,
  };
  const cores = os.availableParallelism?.() ?? os.cpus().length;
  console.log(
    `\n## ${name} (${cores} cores, load average ${fmt(loadBefore, 2)} before, ${fmt(loadAfter, 2)} after; ${concurrency} concurrent, POST /v1/events/${ROUTE} through the ingress, one Contact, unique dedupKeys)`,
  );
  console.log('| measurement | requests | Events per second | p50 ms | p99 ms |');
  console.log('|---|---:|---:|---:|---:|');
  const rows = [
    ['bare INSERT, 1 row (baseline)', results.bareSingle],
    ['service, 1 Event per request', results.serviceSingle],
    [`bare INSERT, ${BATCH} rows (baseline)`, results.bareBatch],
    [`service, ${BATCH}-Event array`, results.serviceBatch],
  ];
  for (const [label, r] of rows) {
    console.log(
      `| ${label} | ${r.count} | ${fmt(r.eventsPerSecond)} | ${fmt(r.p50, 2)} | ${fmt(r.p99, 2)} |`,
    );
  }
  const ratio = (s, b) =>
    `${fmt((100 * s.eventsPerSecond) / b.eventsPerSecond, 1)}% of the baseline's Events/s, ` +
    `p50 ${fmt(s.p50 / b.p50, 1)}x, p99 ${fmt(s.p99 / b.p99, 1)}x`;
  console.log(`single Events: service ${ratio(results.serviceSingle, results.bareSingle)}`);
  console.log(`${BATCH}-Event arrays: service ${ratio(results.serviceBatch, results.bareBatch)}`);
  console.log(
    `arrays / singles through the service: ${fmt(results.serviceBatch.eventsPerSecond / results.serviceSingle.eventsPerSecond, 1)}x the Events/s`,
  );
  console.log(
    `${accepted} Events accepted and ${recorded} recorded for the bench tenant (warm-up included). ` +
      `Requests rotate over ${tokens.length} keys: one key's write budget (100 requests/s, burst ` +
      `1,000) caps it near 100 single Events/s and ${100 * BATCH} Events/s in ${BATCH}-Event arrays.`,
  );
  const unexpected = service.single.unexpected + service.batch.unexpected;
  if (unexpected > 0) throw new Error(`${unexpected} requests were not 202 {accepted: n}`);
  if (recorded !== accepted)
    throw new Error(`${accepted} Events accepted but ${recorded} recorded`);
  return results;
}
