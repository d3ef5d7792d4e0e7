// What the growth benchmark measures on each database, the empty one and the loaded one in
// alternating rounds: recording (wrk straight to that database's events service, single Events
// and 100-Event arrays on by-contact-id), the export of the Contact holding 1,000 Events, the
// retention sweep, and the upkeep with a month of partitions dropped while Events are recorded.
import path from 'node:path';
import { EVENT_NAME, PROPERTIES, TOKEN_REFRESH_MS } from './events-measurements.mjs';
import { DAY_MS, EXPORT_EVENTS, WEEK_MS, eventsModule } from './growth-database.mjs';
import { timeExports } from './growth-service.mjs';
import { runWrk, writeConfig } from './wrk.mjs';

/** The recording measurements: Events per request on by-contact-id. */
export const RECORDING = [
  { name: 'single', label: 'single Event', events: 1 },
  { name: 'array-100', label: '100-Event array', events: 100 },
];
/**
 * Rounds of each measurement on each database, each round both in turn, the first of a round
 * alternating (empty, loaded, loaded, empty, …): neither always runs after the other.
 */
export const ROUNDS = 4;
export const EXPORTS_PER_ROUND = 50;
/** The retention the sweep applies to SWEPT_TENANTS of the loaded data's Tenants. */
export const SWEPT_DAYS = 30;
export const SWEPT_TENANTS = 10;
/** Every other Tenant's: longer than the year loaded, so the sweep leaves them alone. */
const LONGEST_DAYS = 400;
/** What the upkeep waits for a lock before it gives a step up (its own default). */
const LOCK_TIMEOUT_MS = 1_000;
const MONTH_MS = 30 * DAY_MS;

/**
 * What the measurements share.
 * @typedef {object} GrowthRun
 * @property {typeof import('pg').default} pg
 * @property {string} repoRoot
 * @property {string} wrk
 * @property {string} runId
 * @property {string} workDir
 * @property {number} seconds
 * @property {number} warmup
 * @property {number} connections
 * @property {import('./events-setup.mjs').BenchTenant} tenant
 * @property {{ tenantId: string, contactId: string }} exportTarget
 * @property {string[]} sweptTenants
 * @property {{ accepted: Record<string, number>, inFlightBound: Record<string, number> }} counts
 */
/**
 * One database with its events service.
 * @typedef {{ name: 'empty' | 'loaded', url: string,
 *   events: import('./growth-service.mjs').EventsProcess }} Side
 */

const quietLogger = { info() {}, warn() {}, error() {}, debug() {} };
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/**
 * The sides in the order of round `round` (from 1): as given in odd rounds, reversed in even ones.
 * @template T
 * @param {T[]} sides
 * @param {number} round
 */
export const roundOrder = (sides, round) => (round % 2 === 1 ? sides : [...sides].reverse());

/**
 * wrk on one database's events service: `events` per request, `seconds` long.
 * @param {GrowthRun} run
 * @param {Side} side
 * @param {{ events: number, seconds: number, tag: string }} load
 */
async function wrkOn(run, side, { events, seconds, tag }) {
  const { tenant } = run;
  if (Date.now() - tenant.tokens.at > TOKEN_REFRESH_MS) await tenant.tokens.refresh();
  const config = writeConfig(path.join(run.workDir, `${tag}.lua`), {
    kind: 'events',
    route: 'by-contact-id',
    events,
    host: new URL(side.events.url).host,
    tokens: tenant.tokens.list,
    contacts: tenant.contacts,
    organizations: [],
    eventName: EVENT_NAME,
    occurredAt: new Date().toISOString(),
    properties: JSON.stringify(PROPERTIES),
  });
  const r = await runWrk({
    wrk: run.wrk,
    url: side.events.url,
    connections: run.connections,
    seconds,
    config,
    tag: `${run.runId}.${tag}`,
  });
  run.counts.accepted[side.name] += r.acceptedEvents;
  // A request in flight when wrk stops is recorded but not counted: one per connection.
  run.counts.inFlightBound[side.name] += run.connections * events;
  return r;
}

/**
 * Each recording measurement, ROUNDS times on each database (roundOrder), warmed up each time.
 * @param {GrowthRun} run
 * @param {Side[]} sides
 */
export async function recordingRounds(run, sides) {
  const rounds = [];
  for (const m of RECORDING) {
    for (let round = 1; round <= ROUNDS; round += 1) {
      for (const side of roundOrder(sides, round)) {
        process.stdout.write(`  ${m.name}, ${side.name}, round ${round} ...`);
        const tag = `${m.name}-${side.name}-${round}`;
        await wrkOn(run, side, { events: m.events, seconds: run.warmup, tag: `${tag}-warmup` });
        const r = await wrkOn(run, side, { events: m.events, seconds: run.seconds, tag });
        const figures = {
          measurement: m.name,
          database: side.name,
          round,
          requestsPerSecond: r.requestsPerSecond,
          eventsPerSecond: r.acceptedEvents / r.seconds,
          p50: r.p50,
          p99: r.p99,
          max: r.max,
          failed: r.failed,
          statuses: r.statuses,
        };
        rounds.push(figures);
        console.log(
          ` ${Math.round(figures.eventsPerSecond)} Events/s, p99 ${figures.p99.toFixed(1)} ms` +
            `${r.failed ? `, ${r.failed} FAILED` : ''}`,
        );
      }
    }
  }
  return rounds;
}

/**
 * The export of the Contact holding 1,000 Events, EXPORTS_PER_ROUND at a time on each database
 * in turn (roundOrder), ROUNDS times.
 * @param {GrowthRun} run
 * @param {Side[]} sides
 */
export async function exportRounds(run, sides) {
  /** @type {Record<string, { latencies: number[], unexpected: number }>} */
  const by = Object.fromEntries(sides.map((s) => [s.name, { latencies: [], unexpected: 0 }]));
  for (let round = 1; round <= ROUNDS; round += 1) {
    for (const side of roundOrder(sides, round)) {
      const r = await timeExports(side.events, {
        ...run.exportTarget,
        count: EXPORTS_PER_ROUND,
        warmup: 3,
        expected: EXPORT_EVENTS,
      });
      by[side.name].latencies.push(...r.latencies);
      by[side.name].unexpected += r.unexpected;
      console.log(
        `  export, ${side.name}, round ${round}: p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms`,
      );
    }
  }
  return by;
}

/**
 * The service's retention sweep: SWEPT_TENANTS Tenants keep their Events SWEPT_DAYS, every other
 * Tenant longer than the data reaches.
 * @param {GrowthRun} run
 * @param {Side} side
 */
export async function sweep(run, side) {
  const { sweepRetention } = await eventsModule(run.repoRoot, 'retention/sweep.js');
  const pool = new run.pg.Pool({ connectionString: side.url, max: 2 });
  try {
    const report = await sweepRetention({
      pool,
      logger: quietLogger,
      retention: async () => ({
        defaultDays: LONGEST_DAYS,
        tenants: run.sweptTenants.map((tenantId) => ({ tenantId, days: SWEPT_DAYS })),
      }),
    });
    return {
      ms: report.durationMs,
      deleted: report.deleted,
      tenants: report.tenantsSwept,
      failed: report.failed.length,
    };
  } finally {
    await pool.end();
  }
}

/**
 * The oldest partitions that together span at least a month, with their estimated Events.
 * @param {import('pg').Pool} pool
 * @param {{ name: string, from: Date | null, to: Date }[]} partitions oldest first
 */
async function oldestMonth(pool, partitions) {
  const month = [];
  let span = 0;
  for (const p of partitions) {
    if (span >= MONTH_MS || p.from === null) break;
    month.push(p);
    span += p.to.getTime() - p.from.getTime();
  }
  const { rows } = await pool.query(
    'select relname as name, greatest(reltuples, 0)::float8 as rows from pg_class where relname = any($1)',
    [month.map((p) => p.name)],
  );
  const estimate = new Map(rows.map((r) => [r.name, r.rows]));
  return month.map((p) => ({ ...p, rows: estimate.get(p.name) ?? 0 }));
}

/**
 * While wrk records single Events: one upkeep run that creates the next partition (`ahead` one
 * more than the partitions there are), then the oldest month of partitions dropped one by one,
 * as the upkeep drops them. Each step timed; wrk's figures cover the whole window.
 * @param {GrowthRun} run
 * @param {Side} side
 * @param {number} ahead
 */
export async function upkeepUnderLoad(run, side, ahead) {
  const { runPartitionUpkeep } = await eventsModule(run.repoRoot, 'partitions/partition-upkeep.js');
  const { dropEventPartition, listEventPartitions } = await eventsModule(
    run.repoRoot,
    'partitions/data/event-partitions.js',
  );
  const pool = new run.pg.Pool({ connectionString: side.url, max: 2 });
  const loadSeconds = Math.max(run.seconds, 8);
  const load = wrkOn(run, side, { events: 1, seconds: loadSeconds, tag: `upkeep-${side.name}` });
  const loadStart = performance.now();
  /** @type {string[]} */
  const errors = [];
  try {
    await sleep(1_500);
    const t0 = performance.now();
    const upkept = await runPartitionUpkeep({
      pool,
      logger: quietLogger,
      partitionMs: WEEK_MS,
      ahead,
      longestRetentionMs: async () => undefined,
      lockTimeoutMs: LOCK_TIMEOUT_MS,
    });
    const upkeep = { ms: performance.now() - t0, created: upkept.created };
    const drops = [];
    for (const p of await oldestMonth(pool, await listEventPartitions(pool))) {
      const client = await pool.connect();
      const start = performance.now();
      try {
        await dropEventPartition(client, p, LOCK_TIMEOUT_MS);
      } catch (err) {
        errors.push(`dropping ${p.name}: ${/** @type {Error} */ (err).message}`);
      } finally {
        client.release();
      }
      drops.push({ name: p.name, rows: p.rows, ms: performance.now() - start });
    }
    const stepsEnd = performance.now() - loadStart;
    const r = await load;
    return {
      upkeep,
      drops,
      monthMs: drops.reduce((sum, d) => sum + d.ms, 0),
      monthRows: drops.reduce((sum, d) => sum + d.rows, 0),
      longestDropMs: Math.max(0, ...drops.map((d) => d.ms)),
      underLoad: stepsEnd < loadSeconds * 1000,
      recording: {
        requestsPerSecond: r.requestsPerSecond,
        p50: r.p50,
        p99: r.p99,
        max: r.max,
        failed: r.failed,
      },
      errors,
    };
  } finally {
    await load.catch(() => undefined);
    await pool.end();
  }
}

/**
 * The bench Tenant's Events each database holds, against what wrk counted accepted.
 * @param {GrowthRun} run
 * @param {Side} side
 * @param {import('pg').Client} client
 */
export async function recordedCheck(run, side, client) {
  const { rows } = await client.query(
    'select count(*)::int as n from events where tenant_id = $1',
    [run.tenant.tenantId],
  );
  const accepted = run.counts.accepted[side.name];
  const bound = run.counts.inFlightBound[side.name];
  const recorded = rows[0].n;
  return {
    accepted,
    recorded,
    ok: recorded >= accepted && recorded <= accepted + bound,
  };
}
