// How the cost of recording, exporting and upkeep grows with a year of Events: two databases of
// the benchmark's own, migrated as the events service's and partitioned by week over the past
// year, one empty and one loaded with `--events` Events (20 million by default) over 1,000,000
// Contacts of 1,000 Tenants (growth-database.mjs). Each gets an events service process of its own
// (growth-service.mjs), and the same measurements run on both in alternating rounds
// (growth-measurements.mjs): recording rates, the export of a Contact holding 1,000 Events, the
// retention sweep, the upkeep and a month of partitions dropped while Events are recorded. It
// prints the loaded figures beside the empty ones with their targets, and the bytes per Event
// with what takes them (growth-report.mjs). Long: run only when named.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UsageError } from '@herald/stack/args.mjs';
import { dataDir } from '@herald/stack/index.mjs';
import { setUp } from './events-setup.mjs';
import {
  CONTACTS,
  EXPORT_EVENTS,
  TENANTS,
  identityBytes,
  loadEvents,
  loadExportContact,
  loadIdentities,
  prepare,
  syntheticIds,
  tableBytes,
} from './growth-database.mjs';
import {
  SWEPT_TENANTS,
  exportRounds,
  recordedCheck,
  recordingRounds,
  sweep,
  upkeepUnderLoad,
} from './growth-measurements.mjs';
import { compare, perEvent, print } from './growth-report.mjs';
import { startEvents } from './growth-service.mjs';
import { machineCores } from './lib.mjs';
import { servicesNode } from './procstat.mjs';
import { withScratchDatabase } from './scratch-database.mjs';
import { ensureWrk } from './wrk.mjs';

export { chartData } from './growth-report.mjs';

export const name = 'growth';
/** Long: run only when named. */
export const byNameOnly = true;
export const defaultEvents = 20_000_000;
export const defaultConnections = 32;

/**
 * `--events`: a count (20000000) or millions (20M, 0.5M), a whole number of Events of at least 1.
 * @param {string} text
 */
export function eventCount(text) {
  const m = /^(\d+(?:\.\d+)?)([mM]?)$/.exec(text.trim());
  const count = m ? Number(m[1]) * (m[2] ? 1e6 : 1) : NaN;
  if (!Number.isSafeInteger(count) || count < 1) {
    throw new UsageError(
      `--events must be a count of Events or millions (20M), not ${JSON.stringify(text)}`,
    );
  }
  return count;
}

/**
 * One scratch database.
 * @typedef {{ name: 'empty' | 'loaded', url: string, client: import('pg').Client,
 *   pg: typeof import('pg').default }} Database
 */

/**
 * Both databases migrated and partitioned, the export's Contact in each, the loaded one filled.
 * @param {string} repoRoot
 * @param {number} count
 * @param {number} now
 * @param {Database[]} dbs
 */
async function build(repoRoot, count, now, dbs) {
  for (const db of dbs) {
    await prepare({ url: db.url, client: db.client, repoRoot, now });
    await loadExportContact(db.client, now);
  }
  const loaded = dbs.find((db) => db.name === 'loaded');
  const start = Date.now();
  const seconds = () => ((Date.now() - start) / 1000).toFixed(0);
  await loadEvents(loaded.client, {
    count,
    now,
    onChunk: (done) =>
      console.log(
        `  loaded ${done.toLocaleString('en-US')} of ${count.toLocaleString('en-US')} Events (${seconds()} s)`,
      ),
  });
  return (Date.now() - start) / 1000;
}

/**
 * The bench Tenant (made through the API, as the events benchmark makes it), its Contacts in
 * each database's identity projection, then `vacuum analyze`. Resolves to the Tenant.
 * @param {import('./lib.mjs').RunOptions} options
 * @param {string} runId
 * @param {Database[]} dbs
 */
async function settle({ ingressUrl, adminToken }, runId, dbs) {
  const tenant = await setUp(ingressUrl, adminToken, runId);
  for (const db of dbs) {
    await loadIdentities(db.client, tenant, db.name === 'loaded');
    const start = Date.now();
    await db.client.query("set maintenance_work_mem = '256MB'");
    await db.client.query('vacuum (analyze)');
    // What the load left dirty is written now, not by a checkpoint during the measurements.
    await db.client.query('checkpoint');
    if (db.name === 'loaded') {
      console.log(`  vacuum analyze and checkpoint: ${((Date.now() - start) / 1000).toFixed(0)} s`);
    }
  }
  return tenant;
}

/**
 * Every measurement, both databases alternating, with each database's events service running.
 * @param {import('./growth-measurements.mjs').GrowthRun} run
 * @param {Database[]} dbs
 */
async function measureAll(run, dbs) {
  const node = (await servicesNode()) ?? process.execPath;
  /** @type {import('./growth-measurements.mjs').Side[]} */
  const sides = [];
  try {
    for (const db of dbs) {
      sides.push({
        name: db.name,
        url: db.url,
        events: await startEvents({ name: db.name, databaseUrl: db.url, node }),
      });
    }
    const rounds = await recordingRounds(run, sides);
    const exports = await exportRounds(run, sides);
    /** @type {Record<string, Awaited<ReturnType<typeof sweep>>>} */
    const sweeps = {};
    /** @type {Record<string, Awaited<ReturnType<typeof upkeepUnderLoad>>>} */
    const upkeeps = {};
    for (const side of sides) sweeps[side.name] = await sweep(run, side);
    for (const side of sides) upkeeps[side.name] = await upkeepUnderLoad(run, side, 3);
    /** @type {Record<string, Awaited<ReturnType<typeof recordedCheck>>>} */
    const recorded = {};
    for (const [i, side] of sides.entries())
      recorded[side.name] = await recordedCheck(run, side, dbs[i].client);
    return { rounds, exports, sweeps, upkeeps, recorded };
  } finally {
    for (const side of sides) await side.events.stop();
  }
}

/**
 * What made the run measure errors rather than the databases.
 * @param {Awaited<ReturnType<typeof measureAll>>} m
 */
function problemsOf(m) {
  const problems = [];
  const failed = m.rounds.reduce((s, r) => s + r.failed, 0);
  if (failed > 0) problems.push(`${failed} recording requests failed`);
  for (const [side, e] of Object.entries(m.exports)) {
    if (e.unexpected > 0)
      problems.push(`${e.unexpected} exports on ${side} were not 200 with every Event`);
  }
  for (const [side, s] of Object.entries(m.sweeps)) {
    if (s.failed > 0)
      problems.push(`the retention sweep failed for ${s.failed} Tenants on ${side}`);
  }
  for (const [side, u] of Object.entries(m.upkeeps)) {
    problems.push(...u.errors.map((e) => `${side}: ${e}`));
    if (u.recording.failed > 0)
      problems.push(`${u.recording.failed} requests failed during the upkeep on ${side}`);
  }
  for (const [side, r] of Object.entries(m.recorded)) {
    if (!r.ok) problems.push(`${side}: ${r.accepted} Events accepted, ${r.recorded} recorded`);
  }
  return problems;
}

/** @param {import('./lib.mjs').RunOptions & { events?: number }} options */
export async function run(options) {
  const count = options.events ?? defaultEvents;
  const startedAt = new Date();
  console.log(
    `\n## growth (${count.toLocaleString('en-US')} Events over ${CONTACTS.toLocaleString('en-US')} Contacts of ` +
      `${TENANTS.toLocaleString('en-US')} Tenants, received over a year; ${options.connections} connections)`,
  );
  const runId = randomBytes(4).toString('hex');
  const workDir = path.join(dataDir, 'bench', `run-growth-${runId}`);
  const wrk = await ensureWrk();
  return withScratchDatabase('herald_bench_growth_empty', 1, (empty) =>
    withScratchDatabase('herald_bench_growth_loaded', 1, async (loaded) => {
      /** @type {Database[]} */
      const dbs = [
        { name: 'empty', url: empty.url, client: empty.clients[0], pg: empty.pg },
        { name: 'loaded', url: loaded.url, client: loaded.clients[0], pg: loaded.pg },
      ];
      const now = Date.now();
      const loadSeconds = await build(options.repoRoot, count, now, dbs);
      const tenant = await settle(options, runId, dbs);
      const bytes = perEvent(
        await tableBytes(loaded.clients[0], count + EXPORT_EVENTS),
        count + EXPORT_EVENTS,
      );
      const emptyBytes = (await tableBytes(empty.clients[0], EXPORT_EVENTS)).total;
      const ids = await syntheticIds(loaded.clients[0], SWEPT_TENANTS + 1);
      /** @type {import('./growth-measurements.mjs').GrowthRun} */
      const growthRun = {
        pg: loaded.pg,
        repoRoot: options.repoRoot,
        wrk,
        runId,
        workDir,
        seconds: options.seconds,
        warmup: options.warmup,
        connections: options.connections,
        tenant,
        exportTarget: { tenantId: ids.exportTenant, contactId: ids.exportContact },
        sweptTenants: ids.tenants.slice(1),
        counts: { accepted: { empty: 0, loaded: 0 }, inFlightBound: { empty: 0, loaded: 0 } },
      };
      try {
        const measured = await measureAll(growthRun, dbs);
        const comparison = compare(measured);
        print(comparison, bytes);
        const problems = problemsOf(measured);
        for (const p of problems) console.log(`  ! ${p}`);
        return {
          startedAt: startedAt.toISOString(),
          cores: machineCores(),
          events: count,
          contacts: CONTACTS,
          tenants: TENANTS,
          connections: options.connections,
          seconds: options.seconds,
          warmupSeconds: options.warmup,
          loadSeconds,
          loadAverage: os.loadavg()[0],
          bytesPerEvent: bytes,
          emptyTableBytes: emptyBytes,
          identityProjectionBytes: await identityBytes(loaded.clients[0]),
          rounds: measured.rounds,
          recorded: measured.recorded,
          comparison,
          ...(problems.length ? { problems } : {}),
        };
      } finally {
        fs.rmSync(workDir, { recursive: true, force: true });
      }
    }),
  );
}
