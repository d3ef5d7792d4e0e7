// Every process's Prometheus endpoint on the running stack (GET /metrics on its METRICS_PORT,
// never on the API's port or through the ingress), scraped after real traffic through the
// ingress: the RED series by route pattern, each process's domain metrics, the Node runtime, a
// privacy guard over every label value, and the catalogue in docs/metrics.md against what is
// exposed.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  accessToken,
  basic,
  call,
  exchange,
  expectStatus,
  INGRESS,
  newKey,
  newTenant,
  refusedWhileSuspended,
  repoRoot,
} from './support.js';

// ---------------------------------------------------------------------------------------------
// Where the endpoints are: the stack's registry, moved as the stack moves them (tools/stack/src/
// config.mjs): HERALD_<NAME>_METRICS_PORT, else the registry's distance from HERALD_<NAME>_PORT.

interface RegistryEntry {
  name: string;
  port: number;
  metricsPort: number;
}

const registry = JSON.parse(
  readFileSync(path.join(repoRoot, 'tools', 'stack', 'src', 'processes.generated.json'), 'utf8'),
) as RegistryEntry[];

const envName = (name: string) => name.toUpperCase().replace(/[^A-Z0-9]+/g, '_');

function metricsUrl(name: string): string {
  const entry = registry.find((e) => e.name === name);
  if (!entry) throw new Error(`no process ${name} in the registry`);
  const moved = Number(process.env[`HERALD_${envName(name)}_PORT`] || entry.port);
  const port = Number(
    process.env[`HERALD_${envName(name)}_METRICS_PORT`] || moved + (entry.metricsPort - entry.port),
  );
  return `http://127.0.0.1:${port}/metrics`;
}

// ---------------------------------------------------------------------------------------------
// The text format, as far as this test needs it.

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Scrape {
  text: string;
  /** Family name → its TYPE (counter, gauge, histogram). */
  families: Map<string, string>;
  samples: Sample[];
}

const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function parse(text: string): Scrape {
  const families = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('# TYPE ')) {
      const [, , name, type] = line.split(' ');
      families.set(name!, type!);
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(LABEL)) {
      labels[key!] = value!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return { text, families, samples };
}

async function scrape(name: string): Promise<Scrape> {
  const res = await fetch(metricsUrl(name));
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  return parse(await res.text());
}

/** The samples of `name` whose labels include `labels`. */
function find(s: Scrape, name: string, labels: Record<string, string> = {}): Sample[] {
  return s.samples.filter(
    (sample) =>
      sample.name === name &&
      Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
}

const total = (samples: Sample[]) => samples.reduce((sum, s) => sum + s.value, 0);

/**
 * Scrapes until `check` passes (asynchronous work: the relays publish after the request) and the
 * scrape holds the event-loop delay: the runtime instrumentation reports it only from 5 samples
 * (10 ms apart) taken since its last collection, so a scrape just after the stack's Prometheus
 * (every 5 s) or another test's can lack it.
 */
async function eventually(name: string, check: (s: Scrape) => void = () => {}, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await scrape(name);
    try {
      expect(s.families.has('nodejs_eventloop_delay_p99')).toBe(true);
      check(s);
      return s;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** The RED histogram of one route pattern, method and status: at least one request recorded. */
function expectRed(s: Scrape, route: string, method: string, status: number) {
  const labels = {
    http_route: route,
    http_request_method: method,
    http_response_status_code: String(status),
  };
  expect(total(find(s, 'http_server_request_duration_count', labels))).toBeGreaterThan(0);
  expect(find(s, 'http_server_request_duration_bucket', { ...labels, le: '+Inf' })).toHaveLength(1);
  expect(find(s, 'http_server_request_duration_sum', labels)).toHaveLength(1);
}

/** The Node runtime and the process's PostgreSQL pool, in every process. */
function expectRuntimeAndPool(s: Scrape, pool: string) {
  for (const family of [
    'nodejs_eventloop_delay_p99',
    'nodejs_eventloop_utilization',
    'v8js_memory_heap_used',
    'v8js_gc_duration',
  ]) {
    expect(s.families.has(family)).toBe(true);
  }
  const attributes = { db_client_connection_pool_name: pool };
  expect(
    find(s, 'db_client_connection_count', { ...attributes, db_client_connection_state: 'idle' }),
  ).toHaveLength(1);
  expect(
    find(s, 'db_client_connection_count', { ...attributes, db_client_connection_state: 'used' }),
  ).toHaveLength(1);
  expect(find(s, 'db_client_connection_max', attributes)[0]?.value).toBeGreaterThan(0);
  expect(find(s, 'db_client_connection_pending_requests', attributes)).toHaveLength(1);
}

// ---------------------------------------------------------------------------------------------
// Traffic through the ingress, as customers and operators send it. The identifiers it uses are
// remembered: none may show up in any scrape.

const PROCESSES = ['auth', 'contacts', 'events', 'billing', 'events-relay'];
const personal: string[] = [];
let tenantId: string;

beforeAll(async () => {
  tenantId = await newTenant('Metrics');
  const token = await accessToken(tenantId, ['contacts:write', 'contacts:read', 'events:write']);
  const key = await newKey(tenantId, { kind: 'secret', scopes: ['contacts:read'] });
  personal.push(tenantId, key.clientId);

  // auth: a refused exchange and an issued one (accessToken above).
  await expectStatus(await exchange(basic(key.clientId, 'not-the-secret')), 401);
  const readOnly = await (
    await exchange(basic(key.clientId, key.secret!))
  ).json<{ accessToken: string }>();

  // contacts: an upsert whose externalId is an email (a raw path would carry it).
  const email = `metrics.${randomUUID().slice(0, 8)}@example.com`;
  const externalId = `ext-${email}`;
  personal.push(email, externalId);
  const created = await call('PUT', `/v1/contacts/${encodeURIComponent(externalId)}`, token, {
    email,
  });
  expect(created.status).toBe(201);
  const contact = await created.json<{ id: string }>();
  personal.push(contact.id);

  // events: recorded, resent (a duplicate), repeated inside one request, and one unresolved.
  const event = (fields: Record<string, unknown>) => ({
    eventName: 'Metrics Checked',
    occurredAt: new Date().toISOString(),
    ...fields,
  });
  const dedupKey = `dk-${randomUUID()}`;
  const recorded = event({ contactExternalId: externalId, dedupKey });
  await expectStatus(await call('POST', '/v1/events/by-external-id', token, recorded), 202);
  await expectStatus(await call('POST', '/v1/events/by-external-id', token, recorded), 202);
  const repeated = event({ contactEmail: email, dedupKey: `dk-${randomUUID()}` });
  await expectStatus(await call('POST', '/v1/events/by-email', token, [repeated, repeated]), 202);
  const stranger = `nobody-${randomUUID()}@example.com`;
  personal.push(stranger);
  await expectStatus(
    await call('POST', '/v1/events/by-email', token, event({ contactEmail: stranger })),
    422,
  );

  // the policy's refusals: no valid token (401), a missing scope (403), a suspended Tenant (402).
  await expectStatus(await call('POST', '/v1/events/by-external-id', 'not-a-token', recorded), 401);
  await expectStatus(
    await call('POST', '/v1/events/by-external-id', readOnly.accessToken, recorded),
    403,
  );
  personal.push(await refusedWhileSuspended('Metrics suspended', event({ contactEmail: email })));
}, 60_000);

// ---------------------------------------------------------------------------------------------

describe('the metrics endpoints', () => {
  it.each(PROCESSES)(
    'when %s is scraped on its metrics port, then it answers in the Prometheus text format, never through the ingress',
    async (name) => {
      const s = await scrape(name);
      expect(s.families.size).toBeGreaterThan(10);
      // Only counters end in _total; no target_info (a random instance id) is exposed.
      expect(s.families.has('target_info')).toBe(false);
      const ingress = await fetch(`${INGRESS}/metrics`);
      expect(ingress.status).toBe(404);
      await ingress.arrayBuffer();
    },
  );

  it('when auth has exchanged tokens, then RED by route pattern, exchanges by outcome and the argon2 queue are exposed', async () => {
    const s = await eventually('auth');
    expectRed(s, '/v1/token', 'POST', 200);
    expectRed(s, '/v1/token', 'POST', 401);
    expectRed(s, '/admin/v1/tenants', 'POST', 201);
    expect(s.families.get('auth_token_exchanges_total')).toBe('counter');
    expect(total(find(s, 'auth_token_exchanges_total', { outcome: 'issued' }))).toBeGreaterThan(0);
    expect(
      total(find(s, 'auth_token_exchanges_total', { outcome: 'invalid_client' })),
    ).toBeGreaterThan(0);
    expect(find(s, 'auth_hash_queue_depth')).toHaveLength(1);
    expect(find(s, 'auth_hash_active')).toHaveLength(1);
    expectRuntimeAndPool(s, 'herald-auth');
  });

  it('when contacts has upserted, then RED by route pattern, the policy and the in-process outbox are exposed', async () => {
    const s = await eventually('contacts', (c) =>
      expect(
        total(
          find(c, 'outbox_published_total', {
            outbox_name: 'contacts',
            messaging_destination_name: 'herald.contacts.changed',
          }),
        ),
      ).toBeGreaterThan(0),
    );
    expectRed(s, '/v1/contacts/:externalId', 'PUT', 201);
    // internal calls carry their pattern too (events asked contacts to resolve an email)
    expectRed(s, '/internal/v1/identities/resolve', 'POST', 200);
    const changed = {
      outbox_name: 'contacts',
      messaging_destination_name: 'herald.contacts.changed',
    };
    expect(find(s, 'outbox_pending', changed)).toHaveLength(1);
    expect(find(s, 'outbox_lag', changed)).toHaveLength(1);
    expect(total(find(s, 'outbox_publish_lag_count', changed))).toBeGreaterThan(0);
    expect(s.families.get('outbox_publish_lag')).toBe('histogram');
    expectRuntimeAndPool(s, 'herald-contacts');
  });

  it('when events has recorded, then RED by route pattern, refusals by rule, 402s, dedup hits and identity resolution are exposed', async () => {
    const s = await eventually('events');
    expectRed(s, '/v1/events/by-external-id', 'POST', 202);
    expectRed(s, '/v1/events/by-email', 'POST', 422);
    expectRed(s, '/v1/events/by-email', 'POST', 402);
    for (const rule of ['token', 'scope', 'subscription']) {
      expect(total(find(s, 'policy_refused_total', { rule }))).toBeGreaterThan(0);
    }
    expect(s.families.get('policy_refused_total')).toBe('counter');
    // the resent Event was known to the fast path; the repeated one was dropped in the request
    expect(total(find(s, 'events_dedup_hits_total', { store: 'redis' }))).toBeGreaterThan(0);
    expect(
      total(find(s, 'events_dedup_hits_total', { store: 'request', route: 'by-email' })),
    ).toBeGreaterThan(0);
    expect(
      total(find(s, 'events_identity_unresolved_total', { route: 'by-email' })),
    ).toBeGreaterThan(0);
    expect(
      total(
        find(s, 'events_identity_resolution_duration_count', { source: 'contacts', outcome: 'ok' }),
      ),
    ).toBeGreaterThan(0);
    expect(s.families.get('events_identity_resolution_duration')).toBe('histogram');
    expect(total(find(s, 'events_accepted_total'))).toBeGreaterThan(0);
    expectRuntimeAndPool(s, 'herald-events');
    expect(
      find(s, 'db_client_connection_max', {
        db_client_connection_pool_name: 'herald-events-export',
      }),
    ).toHaveLength(1);
  });

  it('when billing has counted payment failures, then RED by route pattern and its in-process outbox are exposed', async () => {
    const s = await eventually('billing', (b) =>
      expect(
        total(
          find(b, 'outbox_published_total', {
            outbox_name: 'billing',
            messaging_destination_name: 'herald.subscriptions.changed',
          }),
        ),
      ).toBeGreaterThan(0),
    );
    expectRed(s, '/admin/v1/tenants/:tenantId/billing/payment-failures', 'POST', 200);
    expectRed(s, '/admin/v1/tenants/:tenantId/billing/payment-details', 'POST', 200);
    expectRuntimeAndPool(s, 'herald-billing');
  });

  it('when the events relay has published, then the outbox depth, age, publish rate and lag per topic are exposed', async () => {
    const recorded = {
      outbox_name: 'events',
      messaging_destination_name: 'herald.events.recorded',
    };
    const s = await eventually('events-relay', (r) =>
      expect(total(find(r, 'outbox_published_total', recorded))).toBeGreaterThan(0),
    );
    expect(find(s, 'outbox_pending', recorded)).toHaveLength(1);
    expect(find(s, 'outbox_lag', recorded)).toHaveLength(1);
    expect(total(find(s, 'outbox_publish_lag_count', recorded))).toBeGreaterThan(0);
    // Its HTTP server answers probes only, which are not recorded. A request it refuses is
    // (dot-segments.e2e.test.ts sends each process such paths): those are 400s, never a probe.
    const recordedRequests = find(s, 'http_server_request_duration_count');
    expect(recordedRequests.filter((r) => r.labels.http_response_status_code !== '400')).toEqual(
      [],
    );
    expectRuntimeAndPool(s, 'herald-events-relay');
  });
});

// ---------------------------------------------------------------------------------------------

const EMAIL = /[^\s@]+@[^\s@]+\.[^\s@]+/;
const UUID = /[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}/i;
const IPV4 = /(^|[^0-9.])(\d{1,3}\.){3}\d{1,3}($|[^0-9.])/;
const IPV6 = /^[0-9a-f]*:[0-9a-f]*:[0-9a-f:.]*$/i;

describe('privacy', () => {
  it('when every process is scraped after that traffic, then no label value looks like an email, a uuid or an IP address, and no identifier used appears anywhere', async () => {
    const offending: string[] = [];
    for (const name of PROCESSES) {
      const s = await scrape(name);
      for (const sample of s.samples) {
        for (const [label, value] of Object.entries(sample.labels)) {
          if (EMAIL.test(value) || UUID.test(value) || IPV4.test(value) || IPV6.test(value)) {
            offending.push(`${name}: ${sample.name}{${label}="${value}"}`);
          }
        }
      }
      for (const value of personal) {
        if (s.text.includes(value)) offending.push(`${name}: the text holds ${value}`);
      }
    }
    expect(offending).toEqual([]);
  });

  it('when the guard is shown an email, a uuid, an IPv4 and an IPv6 address, then it catches each, and not a route pattern or a bucket bound', () => {
    const caught = (value: string) =>
      EMAIL.test(value) || UUID.test(value) || IPV4.test(value) || IPV6.test(value);
    for (const value of [
      'a.b@example.com',
      randomUUID(),
      '127.0.0.1',
      '10.2.3.4:80',
      '::1',
      'fe80::1',
    ]) {
      expect(caught(value)).toBe(true);
    }
    for (const value of [
      '/v1/contacts/:externalId',
      '0.005',
      '+Inf',
      '0.223.0',
      'herald.events.recorded',
    ]) {
      expect(caught(value)).toBe(false);
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('the catalogue (docs/metrics.md)', () => {
  it('when every process is scraped, then each family exposed is in the catalogue with its type', async () => {
    const doc = readFileSync(path.join(repoRoot, 'docs', 'metrics.md'), 'utf8');
    // Rows: | `name` | type | ... (padded as prettier pads tables)
    const documented = new Map(
      [...doc.matchAll(/^\|\s*`([a-z_:][a-z0-9_:]*)`\s*\|\s*(counter|gauge|histogram)\s*\|/gm)].map(
        (m) => [m[1]!, m[2]!],
      ),
    );
    const missing: string[] = [];
    for (const name of PROCESSES) {
      const s = await scrape(name);
      for (const [family, type] of s.families) {
        if (documented.get(family) !== type) missing.push(`${name}: ${family} (${type})`);
      }
    }
    expect(missing).toEqual([]);
  });
});
