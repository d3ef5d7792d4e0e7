// Recording Events, upserting and reading Contacts through the ingress, driven by wrk
// (wrk.mjs, requests.lua), beside the floor measured in the same run: a bare PostgreSQL INSERT
// of the same rows into a scratch database holding the events service's schema, from a pg Pool
// at the same concurrency. The service does more per request (token check, rate budget,
// identity resolution through the contacts service, dedup claims, the event-name catalog, the
// outbox row), so the ratio to the floor says what all of that costs. The SDK's batching tracker
// (@herald/client, in a Node process of its own: sdk-tracker.mjs) records the same Events in
// the same run, beside the raw array route wrk sends. Around every measurement: CPU per request
// of every process (procstat.mjs); while Events are recorded: the publish lag to Kafka and the
// outbox depth (lag.mjs). Each figure has its target beside it. This file runs the steps; what
// is measured, how, against what, and the report are in the events-*.mjs files beside it.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { databaseUrl, dataDir, kafkaBrokers } from '@herald/stack/index.mjs';
import { formatNumber } from '@herald/observability/chart.mjs';
import { closeFloor, measure } from './events-drivers.mjs';
import { CONTACTS, KEYS, MEASUREMENTS, ORGANIZATIONS } from './events-measurements.mjs';
import { print } from './events-report.mjs';
import { setUp } from './events-setup.mjs';
import { evaluate, memoryTargets, runProblems } from './events-targets.mjs';
import { outboxSampler, startLagConsumer } from './lag.mjs';
import { machineCores } from './lib.mjs';
import { memoryTracker, servicesNode, stackPids } from './procstat.mjs';
import { relayCount } from './relays.mjs';
import { ensureWrk } from './wrk.mjs';

export { MEASUREMENTS, measurementNames } from './events-measurements.mjs';
export { chartData } from './events-report.mjs';

export const name = 'events';
export const defaultConnections = 32;

/** @typedef {import('./events-targets.mjs').Result} Result */
/** @typedef {Awaited<ReturnType<typeof startLagConsumer>>} LagConsumer */
/**
 * A run's state: what the measurements share (events-drivers.mjs), the measurements chosen, the
 * lag consumer, the connections to the events database, and the load and time it started at.
 * @typedef {import('./events-drivers.mjs').EventsRun & {
 *   selected: import('./events-measurements.mjs').Measurement[],
 *   lag: LagConsumer | null, eventsDb: import('pg').Client, samplerDb: import('pg').Pool,
 *   relays: ReturnType<typeof relayCount>, loadBefore: number, startedAt: Date }} Session
 */
/**
 * What the run prints, returns and writes to the results JSON.
 * @typedef {object} Summary
 * @property {string} startedAt
 * @property {number} seconds
 * @property {number} warmupSeconds
 * @property {number} connections
 * @property {number} cores
 * @property {{ before: number, after: number }} loadAverage
 * @property {number} keys
 * @property {number} contacts
 * @property {number} organizations
 * @property {string} tenantId
 * @property {number} acceptedEvents
 * @property {number} recordedEvents
 * @property {number} inFlightBound
 * @property {(ReturnType<LagConsumer['lag']> & { sample: LagConsumer['sample'] }) | null} lag
 * @property {ReturnType<typeof summarizeOutbox>} outbox
 * @property {ReturnType<typeof memoryTargets>} memoryMiB
 * @property {Omit<Result, 'window'>[]} measurements
 * @property {string[]} problems
 */

/**
 * @param {import('./lib.mjs').RunOptions} options
 * @returns {Promise<Summary>}
 */
export async function run(options) {
  const session = await open(options);
  const { results, unpublished } = await measureAll(session);
  session.memory.sample(session.pids);
  const recorded = await closeOut(session);
  const summary = summarize(session, results, recorded, unpublished);
  print(summary);
  return summary;
}

/**
 * Everything the measurements need: wrk, the bench Tenant, the lag consumer (when Events are
 * recorded), the memory tracker, and the events database's connections with the outbox sampler.
 * @param {import('./lib.mjs').RunOptions} options
 * @returns {Promise<Session>}
 */
async function open({ ingressUrl, adminToken, repoRoot, seconds, warmup, connections, only }) {
  const pg = (await import('pg')).default;
  // Built by the stack's `up` before this runs.
  const { timeOrderedUuid } = await import('@herald/db');
  const selected = MEASUREMENTS.filter((m) => !only || only.includes(m.name));
  const wrk = selected.some((m) => m.kind && m.driver !== 'sdk') ? await ensureWrk() : null;
  const runId = randomBytes(4).toString('hex');
  const workDir = path.join(dataDir, 'bench', `run-${runId}`);
  const setupStart = Date.now();
  const tenant = await setUp(ingressUrl, adminToken, runId);
  console.log(
    `  set up a Tenant, ${KEYS} keys and tokens, ${CONTACTS} Contacts, ${ORGANIZATIONS} organizations (${((Date.now() - setupStart) / 1000).toFixed(1)} s)`,
  );
  const occurredAt = new Date().toISOString();
  const host = new URL(ingressUrl).host;

  const recordsEvents = selected.some((m) => m.kind === 'events');
  const lag = recordsEvents ? await startLagConsumer({ brokers: kafkaBrokers, runId }) : null;
  const pids = await stackPids();
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
  return {
    pg,
    timeOrderedUuid,
    ingressUrl,
    repoRoot,
    seconds,
    warmup,
    connections,
    runId,
    workDir,
    wrk,
    tenant,
    host,
    occurredAt,
    pids,
    memory,
    outbox,
    floor: { database: null, pool: null, key: 0 },
    // Requests still in flight when wrk stops are recorded but not counted by wrk: at most one
    // per connection and run, so the recorded count may exceed the accepted one by this much.
    counts: { accepted: 0, inFlightBound: 0 },
    selected,
    lag,
    eventsDb,
    samplerDb,
    // A second relay for the measurements that ask for it, on the services' own Node.
    relays: relayCount({ node: (await servicesNode()) ?? undefined }),
    loadBefore: os.loadavg()[0],
    startedAt: new Date(),
  };
}

/**
 * Every chosen measurement in turn, with its progress line; after the last that records Events,
 * the wait for their publishing (the Events it leaves unpublished). Closes all but the events
 * database's own connection, which closeOut() still needs, unless a measurement failed.
 * @param {Session} session
 * @returns {Promise<{ results: Result[], unpublished: number }>}
 */
async function measureAll(session) {
  const { selected, lag } = session;
  const lastEventMeasurement = selected.findLast((m) => m.kind === 'events');
  /** @type {Result[]} */
  const results = [];
  let unpublished = 0;
  let lagStopped = !lag;
  try {
    for (const m of selected) {
      process.stdout.write(`  ${m.name} ...`);
      const started = await session.relays.use(m.relays ?? 1);
      if (started.length > 0) process.stdout.write(` (${started.join(', ')} started)`);
      const figures = await measure(session, m);
      results.push({ ...m, ...figures });
      process.stdout.write(
        ` ${formatNumber(figures.requestsPerSecond)} req/s, p99 ${formatNumber(figures.p99)} ms` +
          `${figures.failed ? `, ${figures.failed} FAILED` : ''}\n`,
      );
      if (m === lastEventMeasurement) {
        unpublished = await drainPublishing(session);
        await lag.stop();
        lagStopped = true;
      }
      if (m.rows && !selected.slice(selected.indexOf(m) + 1).some((x) => x.rows)) {
        // The floors are done: drop the scratch database now, not after the service runs.
        await closeFloor(session.floor);
      }
    }
  } catch (error) {
    await session.eventsDb.end().catch(() => {});
    throw error;
  } finally {
    await session.relays
      .stop()
      .catch((/** @type {Error} */ err) =>
        console.log(`  could not stop the relays started for the run: ${err.message}`),
      );
    await session.outbox.stop();
    await session.samplerDb.end();
    await closeFloor(session.floor);
    if (!lagStopped) await lag.stop().catch(() => {});
    fs.rmSync(session.workDir, { recursive: true, force: true });
  }
  return { results, unpublished };
}

/**
 * Waits (at most 60 s, or 15 s without progress) until the relay has published every Event
 * of the bench Tenant (outbox keys start with the Tenant id), and the consumer has had a
 * moment to read the last of them. Resolves to the rows left.
 * @param {Session} session
 */
async function drainPublishing({ eventsDb, tenant }) {
  const pending = async () =>
    (
      await eventsDb.query('select count(*)::int as n from outbox where key like $1', [
        `${tenant.tenantId}:%`,
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

/**
 * Counts the Events recorded for the bench Tenant, then deletes them with its claims and catalog
 * and closes the events database's connection. Resolves to the count.
 * @param {Session} session
 * @returns {Promise<number>}
 */
async function closeOut({ eventsDb, tenant }) {
  // Every accepted Event is recorded: unique dedupKeys, nothing skipped, nothing extra.
  const { rows } = await eventsDb.query(
    'select count(*)::int as n from events where tenant_id = $1',
    [tenant.tenantId],
  );
  const recorded = rows[0].n;
  // The bench Tenant's Events have served: left behind, every run would add hundreds of thousands
  // of rows to the stack's database (and to every dump the erasure tests take of it).
  for (const table of ['events', 'dedup_claims', 'event_names']) {
    await eventsDb.query(`delete from ${table} where tenant_id = $1`, [tenant.tenantId]);
  }
  // Vacuumed now, while nothing is measured: otherwise autovacuum cleans up these deletions
  // during the next run, and its CPU goes into that run's figures.
  await eventsDb.query('vacuum (analyze) events, dedup_claims, event_names, outbox');
  await eventsDb.end();
  return recorded;
}

/**
 * Each measurement with its publish lag, outbox and targets, and the run's figures around them.
 * @param {Session} session
 * @param {Result[]} results
 * @param {number} recorded
 * @param {number} unpublished
 * @returns {Summary}
 */
function summarize(session, results, recorded, unpublished) {
  const { lag, outbox, counts, tenant } = session;
  const byName = Object.fromEntries(results.map((r) => [r.name, r]));
  for (const r of results) {
    if (r.kind === 'events') {
      r.lag = lag.lag(r.name);
      r.outbox = outbox.between(r.window.from, r.window.to);
    }
    evaluate(r, byName);
  }
  const { accepted, inFlightBound } = counts;
  const problems = runProblems(results, { accepted, recorded, inFlightBound, unpublished });
  return {
    startedAt: session.startedAt.toISOString(),
    seconds: session.seconds,
    warmupSeconds: session.warmup,
    connections: session.connections,
    cores: machineCores(),
    loadAverage: { before: session.loadBefore, after: os.loadavg()[0] },
    keys: KEYS,
    contacts: tenant.contacts.length,
    organizations: tenant.organizations.length,
    tenantId: tenant.tenantId,
    acceptedEvents: accepted,
    recordedEvents: recorded,
    inFlightBound,
    lag: lag ? { ...lag.lag(), sample: lag.sample } : null,
    outbox: summarizeOutbox(outbox.all()),
    memoryMiB: memoryTargets(session.memory.result()),
    measurements: results.map(({ window: _w, ...r }) => r),
    problems,
  };
}

/**
 * Start, max and end of the outbox depth over the whole run, or null without a sample.
 * @param {{ at: number, depth: number }[]} samples
 */
function summarizeOutbox(samples) {
  if (samples.length === 0) return null;
  return {
    start: samples[0].depth,
    max: Math.max(...samples.map((s) => s.depth)),
    end: samples[samples.length - 1].depth,
    samples: samples.length,
  };
}
