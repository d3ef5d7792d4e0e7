// Recording Events, upserting and reading Contacts through the ingress, driven by wrk
// (wrk.mjs, requests.lua), beside the floor measured in the same run: a bare PostgreSQL INSERT
// of the same rows into a scratch database holding the events service's schema, from a pg Pool
// at the same concurrency. The service does more per request (token check, rate budget,
// identity resolution through the contacts service, dedup claims, the event-name catalog, the
// outbox row), so the ratio to the floor says what all of that costs. The SDK's batching tracker
// (@herald/client, in a Node process of its own: sdk-tracker.mjs) records the same Events in
// the same run, beside the raw array route wrk sends. Around every
// measurement: CPU per request of every process (procstat.mjs); while Events are recorded: the
// publish lag to Kafka and the outbox depth (lag.mjs). Each figure has its target beside it.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { databaseUrl, dataDir, kafkaBrokers, up } from '@herald/stack/index.mjs';
import { formatNumber } from '@herald/observability/chart.mjs';
import { outboxSampler, startLagConsumer } from './lag.mjs';
import { closedLoop, machineCores } from './lib.mjs';
import {
  COMPONENTS,
  cpuPerRequest,
  cpuReading,
  memoryTracker,
  servicesNode,
  stackPids,
} from './procstat.mjs';
import { startSdkTracker } from './sdk-tracker.mjs';
import { ensureWrk, runWrk, writeConfig } from './wrk.mjs';

export const name = 'events';
export const defaultConnections = 32;

const KEYS = 64; // each key's write budget refills 100 requests/s: 64 keys allow 6,400/s
const CONTACTS = 256;
// Kafka keys organization Events per organization: enough of them to reach the partitions the
// lag consumer samples.
const ORGANIZATIONS = 48;
const EVENT_NAME = 'Bench Event';
const PROPERTIES = { plan: 'pro', amount: 42.5, path: '/checkout', items: ['a-1', 'b-2'] };
/** Access tokens live 900 s: exchanged again before a measurement once older than this. */
const TOKEN_REFRESH_MS = 600_000;

/** Every measurement, in the order they run and are shown. */
export const MEASUREMENTS = [
  { name: 'floor-1', label: 'floor: bare INSERT, 1 row', group: 'floor', rows: 1 },
  ...['by-contact-id', 'by-external-id', 'by-email', 'by-organization'].map((route) => ({
    name: `single-${route.replace(/^by-/, '')}`,
    label: `single Event, ${route}`,
    group: 'service',
    kind: 'events',
    route,
    events: 1,
  })),
  {
    // by-contact-id again, right before the traced one and after the same restart, untraced:
    // tracing's cost is read from two neighbouring measurements of freshly started services.
    // Against single-contact-id, minutes and three other routes earlier, it also read how far
    // this shared machine had drifted meanwhile (0.75 to 1.14 in runs changing nothing).
    name: 'untraced-contact-id',
    label: 'single Event, by-contact-id, untraced',
    group: 'service',
    kind: 'events',
    route: 'by-contact-id',
    events: 1,
    restart: true,
  },
  {
    // by-contact-id again, every service tracing as the chart has it in production: spans
    // exported over OTLP (to the stack's trace receiver) for the chart's share of new traces.
    name: 'traced-contact-id',
    label: 'single Event, by-contact-id, traced',
    group: 'service',
    kind: 'events',
    route: 'by-contact-id',
    events: 1,
    traced: true,
  },
  { name: 'floor-100', label: 'floor: bare INSERT, 100 rows', group: 'floor', rows: 100 },
  ...[100, 1000].map((n) => ({
    name: `array-${n}`,
    label: `${n.toLocaleString('en-US')}-Event array, by-contact-id`,
    group: 'service',
    kind: 'events',
    route: 'by-contact-id',
    events: n,
  })),
  {
    // The same Events as array-100, queued one by one with @herald/client's tracker.track()
    // and sent by its batching tracker (flushAt 100), one tracker per connection.
    name: 'sdk-tracker',
    label: 'SDK tracker, 100-Event batches',
    group: 'service',
    kind: 'events',
    driver: 'sdk',
    route: 'by-contact-id',
    events: 100,
  },
  {
    name: 'upsert',
    label: 'Contact upsert, PUT',
    group: 'service',
    kind: 'upsert',
    route: 'PUT /v1/contacts/{externalId}',
    events: 0,
  },
  {
    name: 'read',
    label: 'Contact read, GET',
    group: 'service',
    kind: 'read',
    route: 'GET /v1/contacts/{externalId}',
    events: 0,
  },
];
export const measurementNames = MEASUREMENTS.map((m) => m.name);

/**
 * The targets. `floorShare`: the share of the matching floor's throughput (1-row floor for
 * singles, 100-row floor for arrays, in Events/s) a measurement must reach.
 */
const TARGETS = {
  single: { requestsPerSecond: 2000, p99: 50, floor: 'floor-1', floorShare: 0.2 },
  'array-100': { eventsPerSecond: 40000, floor: 'floor-100', floorShare: 0.5 },
  'array-1000': { eventsPerSecond: 50000, floor: 'floor-100' },
  // The SDK (JSON, dedupKeys, fetch, in one Node process) costs at most half of the raw route.
  'sdk-tracker': { floor: 'floor-100', raw: 'array-100', rawShare: 0.5 },
  // Tracing as in production costs at most 15 % of the throughput, against the untraced
  // measurement run just before it.
  'traced-contact-id': { base: 'untraced-contact-id', baseShare: 0.85 },
  upsert: { requestsPerSecond: 1500 },
  read: { requestsPerSecond: 3000 },
};
const ROUTE_SPREAD = 0.25; // the other Event routes: within 25 % of by-contact-id
const LAG_P99_MS = 1000;
/** Herald's own processes: each one's RSS at most this over the run. */
const HERALD_PROCESSES = ['auth', 'contacts', 'events', 'billing', 'events-relay'];
const RSS_MAX_MIB = 256;

const targetsOf = (m) => (m.name.startsWith('single-') ? TARGETS.single : TARGETS[m.name]);

/**
 * The JSON answer of `request()` (a fetch), which must be 2xx. A 5xx or a refused connection is
 * tried again for up to 30 s: others restart the services on a shared machine.
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
    if (res.ok) return res.json();
    const body = await res.text();
    if (res.status < 500 || Date.now() > deadline) {
      throw new Error(`${what} answered ${res.status}: ${body}`);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** Runs `fn` over `items`, `limit` at a time. */
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
 */
async function setUp(ingressUrl, adminToken, runId) {
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
 */
async function scratchDatabase(pg, repoRoot, runId) {
  const dbName = `herald_bench_${runId}`;
  const adminClient = new pg.Client({ connectionString: databaseUrl('postgres') });
  await adminClient.connect();
  try {
    await adminClient.query(`create database ${dbName}`);
  } finally {
    await adminClient.end();
  }
  const dir = path.join(repoRoot, 'services/events/migrations');
  const client = new pg.Client({ connectionString: databaseUrl(dbName) });
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
 */
function insertStatement(tenantId, contacts, n, nextKey, newId) {
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

export async function run({
  ingressUrl,
  adminToken,
  repoRoot,
  seconds,
  warmup,
  connections,
  only,
}) {
  const { default: pg } = await import('pg');
  // Built by the stack's `up` before this runs.
  const { timeOrderedUuid } = await import('@herald/db');
  const selected = MEASUREMENTS.filter((m) => !only || only.includes(m.name));
  const wrk = selected.some((m) => m.kind && m.driver !== 'sdk') ? await ensureWrk() : null;
  const runId = randomBytes(4).toString('hex');
  const workDir = path.join(dataDir, 'bench', `run-${runId}`);
  const setupStart = Date.now();
  const { tenantId, keys, tokens, contacts, organizations } = await setUp(
    ingressUrl,
    adminToken,
    runId,
  );
  console.log(
    `  set up a Tenant, ${KEYS} keys and tokens, ${CONTACTS} Contacts, ${ORGANIZATIONS} organizations (${((Date.now() - setupStart) / 1000).toFixed(1)} s)`,
  );
  const occurredAt = new Date().toISOString();
  const host = new URL(ingressUrl).host;

  const recordsEvents = selected.some((m) => m.kind === 'events');
  const lag = recordsEvents ? await startLagConsumer({ brokers: kafkaBrokers, runId }) : null;
  let pids = await stackPids();
  const memory = memoryTracker();
  memory.sample(pids);
  const eventsDb = new pg.Client({ connectionString: databaseUrl('herald_events') });
  eventsDb.on('error', () => {});
  await eventsDb.connect();
  // The sampler's own connection: a pg client runs one query at a time, and the sampler's timer
  // fires while the bench's other queries are under way. A pool of one queues its own overlaps.
  const samplerDb = new pg.Pool({ connectionString: databaseUrl('herald_events'), max: 1 });
  samplerDb.on('error', () => {});
  const outbox = outboxSampler(samplerDb);
  await outbox.start();
  const lastEventMeasurement = selected.findLast((m) => m.kind === 'events');

  let scratch = null;
  let pool = null;
  let floorKey = 0;
  const results = [];
  let acceptedTotal = 0;
  // Requests still in flight when wrk stops are recorded but not counted by wrk: at most one
  // per connection and run, so the recorded count may exceed the accepted one by this much.
  let inFlightBound = 0;
  const loadBefore = os.loadavg()[0];
  const startedAt = new Date();

  /**
   * CPU readings around `measure()`, which resolves to its figures with `requests`; `extra`
   * names more processes to read (the SDK tracker's), alive at both readings.
   */
  async function withCpu(measure, extra = {}) {
    pids = await stackPids(); // a service restarted by someone else has a new pid
    // Memory between measurements, not during them: reading it costs CPU.
    memory.sample(pids);
    const measured = { ...pids, ...extra };
    const before = cpuReading(measured);
    const from = Date.now();
    const figures = await measure();
    const after = cpuReading(measured);
    await outbox.sampleNow();
    const to = Date.now();
    const cpu = cpuPerRequest(before, after, figures.requests);
    return { ...figures, cpuMsPerRequest: cpu, window: { from, to } };
  }

  async function floorMeasurement(m) {
    if (!pool) {
      scratch = await scratchDatabase(pg, repoRoot, runId);
      pool = new pg.Pool({ connectionString: scratch.url, max: connections });
      // An idle client's error (PostgreSQL restarted by someone else) must not end the run.
      pool.on('error', () => {});
    }
    const request = async () => {
      await pool.query(
        insertStatement(
          tenantId,
          contacts,
          m.rows,
          () => `floor-${runId}-${(floorKey += 1)}`,
          timeOrderedUuid,
        ),
      );
      return true;
    };
    await closedLoop({ request, concurrency: connections, seconds: warmup, warmupSeconds: 0 });
    return withCpu(async () => {
      const r = await closedLoop({ request, concurrency: connections, seconds, warmupSeconds: 0 });
      return {
        seconds,
        requests: r.count,
        ok: r.count - r.unexpected,
        failed: r.unexpected,
        requestsPerSecond: (r.count - r.unexpected) / seconds,
        eventsPerSecond: ((r.count - r.unexpected) * m.rows) / seconds,
        p50: r.p50,
        p99: r.p99,
      };
    });
  }

  async function wrkMeasurement(m) {
    if (Date.now() - tokens.at > TOKEN_REFRESH_MS) await tokens.refresh();
    const config = writeConfig(path.join(workDir, `${m.name}.lua`), {
      kind: m.kind,
      route: m.route,
      events: m.events,
      host,
      tokens: tokens.list,
      contacts,
      organizations,
      eventName: EVENT_NAME,
      occurredAt,
      properties: JSON.stringify(PROPERTIES),
    });
    const common = { wrk, url: ingressUrl, connections, config };
    const warm = await runWrk({ ...common, seconds: warmup, tag: `${runId}.${m.name}-warmup` });
    acceptedTotal += warm.acceptedEvents;
    inFlightBound += 2 * connections * m.events;
    return withCpu(async () => {
      const r = await runWrk({ ...common, seconds, tag: `${runId}.${m.name}` });
      acceptedTotal += r.acceptedEvents;
      const { text, ...figures } = r;
      return {
        ...figures,
        eventsPerSecond: r.acceptedEvents / r.seconds,
        warmup: { requests: warm.requests, failed: warm.failed, statuses: warm.statuses },
        wrkOutput: text,
      };
    });
  }

  /**
   * @herald/client's batching tracker in its own Node process (sdk-tracker.mjs), one tracker
   * per connection over the same keys and Contacts as wrk, warmed up like wrk, then measured:
   * `seconds` of track() and the close() that sends what is queued. Its CPU is the `sdk` column.
   */
  async function sdkMeasurement(m) {
    const configFile = path.join(workDir, `${m.name}.json`);
    fs.mkdirSync(workDir, { recursive: true });
    fs.writeFileSync(
      configFile,
      JSON.stringify({
        ingressUrl,
        keys: keys.map(({ clientId, secret }) => ({ clientId, secret })),
        contactIds: contacts.map((c) => c.id),
        trackers: connections,
        flushAt: m.events,
        seconds,
        warmup,
        runId,
        name: m.name,
        eventName: EVENT_NAME,
        properties: PROPERTIES,
      }),
    );
    const sdk = await startSdkTracker(configFile);
    // Every Event the tracker reported recorded counts as accepted; one it gave up on may have
    // been recorded all the same (an answer lost after the commit).
    acceptedTotal += sdk.warm.accepted;
    inFlightBound += sdk.warm.failedEvents;
    try {
      return await withCpu(
        async () => {
          const r = await sdk.measure();
          acceptedTotal += r.accepted;
          inFlightBound += r.failedEvents;
          return {
            seconds: r.seconds,
            requests: r.requests,
            ok: r.ok,
            failed: r.requests - r.ok,
            statuses: r.statuses,
            socketErrors: { network: r.networkErrors },
            acceptedEvents: r.accepted,
            requestsPerSecond: r.ok / r.seconds,
            eventsPerSecond: r.accepted / r.seconds,
            p50: r.p50,
            p99: r.p99,
            mean: r.mean,
            sdk: {
              trackers: connections,
              flushAt: m.events,
              tracked: r.tracked,
              failedEvents: r.failedEvents,
              errors: r.errors,
              ownCpuMs: r.ownCpuMs,
            },
            warmup: {
              requests: sdk.warm.requests,
              failed: sdk.warm.requests - sdk.warm.ok,
              statuses: sdk.warm.statuses,
              failedEvents: sdk.warm.failedEvents,
            },
          };
        },
        { sdk: sdk.pid },
      );
    } finally {
      await sdk.stop();
    }
  }

  /**
   * Waits (at most 60 s, or 15 s without progress) until the relay has published every Event
   * of the bench Tenant (outbox keys start with the Tenant id), and the consumer has had a
   * moment to read the last of them. Resolves to the rows left.
   */
  async function drainPublishing() {
    const pending = async () =>
      (
        await eventsDb.query('select count(*)::int as n from outbox where key like $1', [
          `${tenantId}:%`,
        ])
      ).rows[0].n;
    const deadline = Date.now() + 60000;
    let last = await pending();
    let lastProgress = Date.now();
    while (last > 0 && Date.now() < deadline && Date.now() - lastProgress < 15000) {
      await new Promise((r) => setTimeout(r, 500));
      const now = await pending();
      if (now < last) lastProgress = Date.now();
      last = now;
    }
    await new Promise((r) => setTimeout(r, 1000));
    return last;
  }

  let unpublished = 0;
  let lagStopped = !lag;
  try {
    for (const m of selected) {
      process.stdout.write(`  ${m.name} ...`);
      if (m.traced) await tracing(productionTraceRatio(repoRoot));
      else if (m.restart) await tracing(null, ' (services restarted)');
      let figures;
      try {
        figures =
          m.group === 'floor'
            ? await floorMeasurement(m)
            : m.driver === 'sdk'
              ? await sdkMeasurement(m)
              : await wrkMeasurement(m);
      } finally {
        if (m.traced) await tracing(null);
      }
      results.push({ ...m, ...figures });
      process.stdout.write(
        ` ${formatNumber(figures.requestsPerSecond)} req/s, p99 ${formatNumber(figures.p99)} ms` +
          `${figures.failed ? `, ${figures.failed} FAILED` : ''}\n`,
      );
      if (m === lastEventMeasurement) {
        unpublished = await drainPublishing();
        await lag.stop();
        lagStopped = true;
      }
      if (m.rows && !selected.slice(selected.indexOf(m) + 1).some((x) => x.rows)) {
        // The floors are done: drop the scratch database now, not after the service runs.
        await pool?.end();
        await scratch?.drop();
        pool = null;
        scratch = null;
      }
    }
  } catch (error) {
    await eventsDb.end().catch(() => {});
    throw error;
  } finally {
    await outbox.stop();
    await samplerDb.end();
    await pool?.end();
    await scratch?.drop();
    if (!lagStopped) await lag.stop().catch(() => {});
    fs.rmSync(workDir, { recursive: true, force: true });
  }
  memory.sample(pids);

  // Every accepted Event is recorded: unique dedupKeys, nothing skipped, nothing extra.
  const { rows } = await eventsDb.query(
    'select count(*)::int as n from events where tenant_id = $1',
    [tenantId],
  );
  const recorded = rows[0].n;
  // The bench Tenant's Events have served: left behind, every run would add hundreds of thousands
  // of rows to the stack's database (and to every dump the erasure tests take of it).
  for (const table of ['events', 'dedup_claims', 'event_names']) {
    await eventsDb.query(`delete from ${table} where tenant_id = $1`, [tenantId]);
  }
  // Vacuumed now, while nothing is measured: otherwise autovacuum cleans up these deletions
  // during the next run, and its CPU goes into that run's figures.
  await eventsDb.query('vacuum (analyze) events, dedup_claims, event_names, outbox');
  await eventsDb.end();

  const byName = Object.fromEntries(results.map((r) => [r.name, r]));
  for (const r of results) {
    if (r.kind === 'events') {
      r.lag = lag.lag(r.name);
      r.outbox = outbox.between(r.window.from, r.window.to);
    }
    evaluate(r, byName);
  }
  const problems = [];
  for (const r of results) {
    if (r.ok === 0) {
      problems.push(
        `${r.name}: no request completed in ${r.seconds.toFixed(1)} s (${r.requests} answered); lengthen --seconds or lower --connections`,
      );
    }
    if (r.failed > 0) {
      const statuses = Object.entries(r.statuses ?? {})
        .filter(([s]) => Number(s) >= 300)
        .map(([s, n]) => `${s}: ${n}`);
      const socket = Object.entries(r.socketErrors ?? {})
        .filter(([, n]) => n > 0)
        .map(([k, n]) => `${k} ${n}`);
      problems.push(
        `${r.name}: ${r.failed} of ${r.requests} requests failed (${[...statuses, ...socket].join(', ') || 'unexpected answers'}); its req/s counts 2xx answers only`,
      );
    }
  }
  for (const r of results) {
    if (r.sdk?.failedEvents > 0) {
      problems.push(
        `${r.name}: the tracker gave up on ${r.sdk.failedEvents} of ${r.sdk.tracked} Events (${r.sdk.errors.join('; ')})`,
      );
    }
  }
  if (recorded < acceptedTotal || recorded > acceptedTotal + inFlightBound) {
    problems.push(
      `${acceptedTotal} Events accepted (202, warm-ups included) but ${recorded} recorded for the bench Tenant` +
        ` (up to ${inFlightBound} more may be from requests in flight when wrk stopped)`,
    );
  }
  if (unpublished > 0) {
    problems.push(
      `${unpublished} outbox rows of the bench Tenant were still unpublished after the wait`,
    );
  }

  const summary = {
    startedAt: startedAt.toISOString(),
    seconds,
    warmupSeconds: warmup,
    connections,
    cores: machineCores(),
    loadAverage: { before: loadBefore, after: os.loadavg()[0] },
    keys: KEYS,
    contacts: contacts.length,
    organizations: organizations.length,
    tenantId,
    acceptedEvents: acceptedTotal,
    recordedEvents: recorded,
    inFlightBound,
    lag: lag ? { ...lag.lag(), sample: lag.sample } : null,
    outbox: summarizeOutbox(outbox.all()),
    memoryMiB: memoryTargets(memory.result()),
    measurements: results.map(({ window: _w, ...r }) => r),
    problems,
  };
  print(summary);
  return summary;
}

/** Each Herald process's memory with `pass`: its RSS stayed at most RSS_MAX_MIB. */
export function memoryTargets(memoryMiB) {
  return Object.fromEntries(
    Object.entries(memoryMiB).map(([proc, m]) => [
      proc,
      HERALD_PROCESSES.includes(proc) ? { ...m, pass: m.max <= RSS_MAX_MIB } : m,
    ]),
  );
}

/** The chart's share of new traces kept in production (`telemetry.traceSampleRatio`). */
function productionTraceRatio(repoRoot) {
  const values = fs.readFileSync(path.join(repoRoot, 'charts', 'herald', 'values.yaml'), 'utf8');
  const match = /^ {2}traceSampleRatio: *([0-9.]+) *$/m.exec(values);
  if (!match) throw new Error('charts/herald/values.yaml sets no telemetry.traceSampleRatio');
  return Number(match[1]);
}

/**
 * Restarts the services sampling `ratio` of the traces they begin (OTEL_TRACES_SAMPLER_ARG,
 * which wins over the stack's default of none), or as the stack has them with null; `said` is
 * what the progress line shows instead of the ratio.
 */
async function tracing(ratio, said) {
  if (ratio === null) delete process.env.OTEL_TRACES_SAMPLER_ARG;
  else process.env.OTEL_TRACES_SAMPLER_ARG = String(ratio);
  process.stdout.write(
    said ?? (ratio === null ? ' (tracing back to the stack default)' : ` (tracing ${ratio})`),
  );
  // With the node they run, which need not be the one running this benchmark.
  const node = (await servicesNode()) ?? undefined;
  await up({ build: false, quiet: true, restartServices: true, node });
}

function summarizeOutbox(samples) {
  if (samples.length === 0) return null;
  return {
    start: samples[0].depth,
    max: Math.max(...samples.map((s) => s.depth)),
    end: samples[samples.length - 1].depth,
    samples: samples.length,
  };
}

/** The targets of one measurement, each {what, want, got, pass}, and the floor ratio. */
function evaluate(r, byName) {
  const t = targetsOf(r) ?? {};
  const floor = t.floor ? byName[t.floor] : null;
  r.floorRatio = floor ? r.eventsPerSecond / floor.eventsPerSecond : null;
  const list = [];
  const add = (what, got, want, pass) => list.push({ what, want, got, pass });
  if (r.group === 'service') add('failed requests = 0', r.failed, 0, r.failed === 0);
  if (t.requestsPerSecond) {
    const want = t.requestsPerSecond;
    add(`req/s ≥ ${formatNumber(want)}`, r.requestsPerSecond, want, r.requestsPerSecond >= want);
  }
  if (t.eventsPerSecond) {
    const want = t.eventsPerSecond;
    add(`Events/s ≥ ${formatNumber(want)}`, r.eventsPerSecond, want, r.eventsPerSecond >= want);
  }
  if (t.p99) add(`p99 ≤ ${t.p99} ms`, r.p99, t.p99, r.p99 <= t.p99);
  if (t.floorShare) {
    add(
      `≥ ${t.floorShare} × ${t.floor}`,
      r.floorRatio,
      t.floorShare,
      r.floorRatio === null ? null : r.floorRatio >= t.floorShare,
    );
  }
  if (t.raw) {
    // The SDK beside the raw route it wraps, measured in the same run.
    const raw = byName[t.raw];
    r.rawRatio = raw ? r.eventsPerSecond / raw.eventsPerSecond : null;
    add(
      `≥ ${t.rawShare} × ${t.raw}`,
      r.rawRatio,
      t.rawShare,
      r.rawRatio === null ? null : r.rawRatio >= t.rawShare,
    );
  }
  if (t.base) {
    const base = byName[t.base];
    r.baseRatio = base ? r.requestsPerSecond / base.requestsPerSecond : null;
    add(
      `≥ ${t.baseShare} × ${t.base}`,
      r.baseRatio,
      t.baseShare,
      r.baseRatio === null ? null : r.baseRatio >= t.baseShare,
    );
  }
  if (r.name.startsWith('single-') && r.name !== 'single-contact-id') {
    const base = byName['single-contact-id'];
    const share = base ? r.requestsPerSecond / base.requestsPerSecond : null;
    add(
      `within ${ROUTE_SPREAD * 100}% of by-contact-id`,
      share,
      1 - ROUTE_SPREAD,
      share === null ? null : share >= 1 - ROUTE_SPREAD,
    );
  }
  if (r.kind === 'events') {
    add(`lag p99 ≤ ${LAG_P99_MS} ms`, r.lag.p99, LAG_P99_MS, r.lag.p99 <= LAG_P99_MS);
    // Flat: the backlog grew by at most one second of this measurement's Events.
    const growth = r.outbox.end - r.outbox.start;
    add('outbox flat', growth, r.eventsPerSecond, growth <= Math.max(r.eventsPerSecond, 100));
  }
  r.targets = list;
  r.pass = r.group === 'floor' ? null : list.every((x) => x.pass !== false);
  const perEvent = (r.kind === 'events' && r.events > 1) || r.rows > 1;
  r.primary = {
    unit: perEvent ? 'Events/s' : 'req/s',
    value: perEvent ? r.eventsPerSecond : r.requestsPerSecond,
    // The SDK's target comes from the raw route in the same run.
    target: perEvent
      ? (t.eventsPerSecond ??
        (r.rawRatio ? (r.eventsPerSecond / r.rawRatio) * t.rawShare : undefined))
      : t.requestsPerSecond,
    floor: floor ? (perEvent ? floor.eventsPerSecond : floor.requestsPerSecond) : null,
    floorShare: t.floorShare ?? null,
  };
  r.p99Target = t.p99 ?? null;
}

const mark = (pass) => (pass === true ? '✓' : pass === false ? '✗' : '?');

function print(s) {
  const f = formatNumber;
  console.log(
    `\n## events (${s.cores} cores, load average ${s.loadAverage.before.toFixed(2)} before, ` +
      `${s.loadAverage.after.toFixed(2)} after; ${s.connections} connections, ${s.seconds} s per ` +
      `measurement after ${s.warmupSeconds} s of warm-up; wrk (sdk-tracker: one SDK tracker per connection) through the ingress, ${s.keys} keys, ` +
      `${s.contacts} Contacts, ${s.organizations} organizations, a unique dedupKey per Event)`,
  );
  console.log(
    '| measurement | req/s | Events/s | p50 ms | p99 ms | x floor | failed | targets | result |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---|---|');
  for (const r of s.measurements) {
    const targets = r.targets
      .map((t) => `${t.what} ${mark(t.pass)}${t.pass === false ? ` (${f(t.got)})` : ''}`)
      .join('; ');
    const result = r.pass === null ? 'floor' : r.pass ? 'PASS' : 'FAIL';
    console.log(
      `| ${r.label} | ${f(r.requestsPerSecond)} | ${r.events === 0 ? '-' : f(r.eventsPerSecond)} | ` +
        `${f(r.p50)} | ${f(r.p99)} | ${r.floorRatio === null ? '-' : f(r.floorRatio)} | ` +
        `${r.failed} | ${targets || '-'} | ${result} |`,
    );
  }

  for (const r of s.measurements.filter((m) => m.sdk)) {
    const raw = s.measurements.find((m) => m.name === targetsOf(r)?.raw);
    console.log(
      `\n${r.name}: ${f(r.eventsPerSecond)} Events/s through @herald/client's tracker ` +
        `(${r.sdk.trackers} trackers, flushAt ${r.sdk.flushAt}, in its own Node process, ` +
        `${f(r.cpuMsPerRequest?.sdk)} ms of its CPU per batch)` +
        (raw
          ? `; the raw route, ${raw.name}: ${f(raw.eventsPerSecond)} Events/s (${f(raw.cpuMsPerRequest?.wrk)} ms of wrk's CPU per request): ${f(r.rawRatio)} ×`
          : ''),
    );
  }

  const columns = ['wrk', 'sdk', 'bench', ...COMPONENTS, 'total', 'other'];
  console.log(
    "\nCPU ms per request (utime+stime from /proc; sdk = the SDK tracker's own Node process; bench = this Node process: the floor's pg load, the Kafka consumer, samplers; other = the rest of the machine)",
  );
  console.log(`| measurement | ${columns.join(' | ')} |`);
  console.log(`|---|${columns.map(() => '---:').join('|')}|`);
  for (const r of s.measurements) {
    const c = r.cpuMsPerRequest;
    const cell = (k) => (Number.isFinite(c[k]) ? c[k].toFixed(3) : '-');
    console.log(`| ${r.name} | ${columns.map(cell).join(' | ')} |`);
  }

  const recording = s.measurements.filter((r) => r.kind === 'events');
  if (recording.length > 0) {
    const { partitions, of } = s.lag.sample;
    console.log(
      `\nPublish lag (Kafka record timestamp − receivedAt; sampled: the Events on partitions ${partitions.join(', ')} of ${of}) ` +
        `and outbox depth (rows, every Tenant), targets p99 ≤ ${LAG_P99_MS} ms and a flat depth`,
    );
    console.log(
      '| measurement | accepted | sampled | lag p50 ms | lag p99 ms | lag max ms | outbox start | max | end |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of recording) {
      console.log(
        `| ${r.name} | ${r.acceptedEvents} | ${r.lag.published} | ${f(r.lag.p50)} | ${f(r.lag.p99)} | ` +
          `${f(r.lag.max)} | ${r.outbox.start} | ${r.outbox.max} | ${r.outbox.end} |`,
      );
    }
    console.log(
      `all measured Events: lag p50 ${f(s.lag.p50)} ms, p99 ${f(s.lag.p99)} ms, max ${f(s.lag.max)} ms; ` +
        `outbox over the run: start ${s.outbox.start}, max ${s.outbox.max}, end ${s.outbox.end}`,
    );
  }

  console.log(
    `\nMemory, MiB (RSS; PostgreSQL and nginx: PSS summed over their processes); target for Herald's processes: max ≤ ${RSS_MAX_MIB}`,
  );
  console.log('| process | start | max | end | target |');
  console.log('|---|---:|---:|---:|---|');
  for (const [proc, m] of Object.entries(s.memoryMiB)) {
    console.log(
      `| ${proc} | ${m.start.toFixed(0)} | ${m.max.toFixed(0)} | ${m.end.toFixed(0)} | ${m.pass === undefined ? '-' : mark(m.pass)} |`,
    );
  }
  console.log(
    `\n${s.acceptedEvents} Events accepted and ${s.recordedEvents} recorded for the bench Tenant ` +
      `(warm-ups included; requests in flight when wrk stopped may add up to ${s.inFlightBound}).`,
  );
  const failing = [
    ...s.measurements.filter((r) => r.pass === false).map((r) => r.name),
    ...Object.entries(s.memoryMiB)
      .filter(([, m]) => m.pass === false)
      .map(([proc]) => `memory of ${proc}`),
  ];
  console.log(
    failing.length === 0 ? 'Every target met.' : `Targets missed by: ${failing.join(', ')}.`,
  );
  if (s.problems.length > 0) {
    const bar = '!'.repeat(100);
    console.log(`\n${bar}\nTHIS RUN HAD ERRORS; its figures are not the service's:`);
    for (const p of s.problems) console.log(`  - ${p}`);
    console.log(bar);
  }
}

/** The chart's input (chart.mjs) from this benchmark's results. */
export function chartData(s) {
  return {
    title: 'Herald events benchmark',
    subtitle:
      `${s.startedAt}, ${s.cores} cores, ${s.connections} connections, ${s.seconds} s per measurement; ` +
      `lag p99 ${formatNumber(s.lag?.p99)} ms; ${s.problems.length ? `${s.problems.length} PROBLEMS (see the JSON)` : 'no errors'}`,
    measurements: s.measurements.map((r) => ({
      name: r.name,
      label: r.label,
      group: r.group,
      primary: r.primary,
      p50: r.p50,
      p99: r.p99,
      p99Target: r.p99Target,
      pass: r.pass,
      failed: r.failed,
    })),
  };
}
