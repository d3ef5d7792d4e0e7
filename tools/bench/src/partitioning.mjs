// How long recording stops while a populated `events` table becomes the partitioned one: a
// database of its own migrated as the release before partitioning left it, filled with `--rows`
// Events (10 million by default), then migrations 009 to 015 (the partitioning, then the retention
// sweep's index) applied by the service's own runner while four writers insert Event rows one at a
// time, as recording does. Each phase prints its duration and the writers' latency during it; the
// pause is the longest insert while they ran, against the writers' p99 before any migration (the
// baseline of the same run).
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runMigrations, createPool } from '@herald/db';
import { EVENT_PROPERTIES, fmt, machineCores, stats } from './lib.mjs';
import { withScratchDatabase } from './scratch-database.mjs';

export const name = 'partitioning';
/** Long: run only when named. */
export const byNameOnly = true;
export const defaultRows = 10_000_000;

const DATABASE = 'herald_bench_partitioning';
const WRITERS = 4;
const LOAD_CHUNK = 500_000;
const BASELINE_MS = 5_000;
const PHASES = [
  ['009', 'bound (not valid)'],
  ['010', 'bound validated (scan)'],
  ['011', 'key built concurrently'],
  ['012', 'swap'],
  ['013', 'index on the parent'],
  ['014', 'index per partition'],
  ['015', 'indexes attached'],
];

/**
 * @param {import('pg').Client} client
 * @param {number} rows
 */
async function load(client, rows) {
  const properties = JSON.stringify(EVENT_PROPERTIES);
  for (let done = 0; done < rows; done += LOAD_CHUNK) {
    const n = Math.min(LOAD_CHUNK, rows - done);
    // A year of recording time over 1,000 Tenants, their Contacts random.
    await client.query(
      `insert into events (id, tenant_id, contact_id, event_name, occurred_at, received_at,
                           dedup_key, properties)
       select gen_random_uuid(), ('00000000-0000-4000-8000-' || lpad((g % 1000)::text, 12, '0'))::uuid,
              gen_random_uuid(), 'Bench Event', t, t, 'key-' || g, $2
       from generate_series($1::bigint + 1, $1::bigint + $3) as g,
            lateral (select now() - (g % 31536000) * interval '1 second' as t) as x`,
      [done, properties, n],
    );
  }
  await client.query('vacuum analyze events');
}

/**
 * Writers inserting one Event row at a time until stopped, each insert's end time and latency
 * kept, failures counted.
 * @param {import('pg').Client[]} clients
 */
function startWriters(clients) {
  /** @type {{ at: number, ms: number }[]} */
  const samples = [];
  let failures = 0;
  let running = true;
  const loop = async (/** @type {import('pg').Client} */ client) => {
    while (running) {
      const start = performance.now();
      try {
        await client.query(
          `insert into events (id, tenant_id, contact_id, event_name, occurred_at, properties)
           values (gen_random_uuid(), '00000000-0000-4000-8000-000000000001', gen_random_uuid(),
                   'During Migration', now(), '{}')`,
        );
        samples.push({ at: Date.now(), ms: performance.now() - start });
      } catch {
        failures += 1;
      }
    }
  };
  const loops = Promise.all(clients.map(loop));
  return {
    samples,
    failures: () => failures,
    async stop() {
      running = false;
      await loops;
    },
  };
}

/**
 * The migrations from 009 on, one phase at a time, each timed.
 * @param {string} url
 * @param {string} migrations the service's migrations folder
 */
async function migratePhases(url, migrations) {
  const pool = createPool({ connectionString: url, applicationName: 'bench-partitioning', max: 1 });
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-partitioning-'));
  const files = (await readdir(migrations)).sort();
  /** @type {{ phase: string, label: string, from: number, to: number }[]} */
  const phases = [];
  try {
    // The files before 009 are applied already: the runner skips them.
    for (const [prefix, label] of [['0', ''], ...PHASES]) {
      for (const file of files.filter((f) => (prefix === '0' ? f < '009' : f.startsWith(prefix)))) {
        await cp(path.join(migrations, file), path.join(dir, file));
      }
      if (prefix === '0') continue;
      const from = Date.now();
      await runMigrations(pool, dir);
      phases.push({ phase: prefix, label, from, to: Date.now() });
    }
  } finally {
    await pool.end();
    await rm(dir, { recursive: true, force: true });
  }
  return phases;
}

/**
 * Each phase's duration and the writers' latency during it.
 * @param {{ phase: string, label: string, from: number, to: number }[]} phases
 * @param {{ at: number, ms: number }[]} samples
 */
function phaseFigures(phases, samples) {
  return phases.map((p) => {
    const during = samples.filter((s) => s.at >= p.from && s.at <= p.to).map((s) => s.ms);
    const { count, p50, p99 } = stats(during);
    const seconds = (p.to - p.from) / 1000;
    return {
      ...p,
      seconds,
      inserts: count,
      insertsPerSecond: count / Math.max(seconds, 1e-3),
      p50,
      p99,
      maxMs: during.length ? Math.max(...during) : NaN,
    };
  });
}

/** @param {ReturnType<typeof phaseFigures>} figures */
function printPhases(figures) {
  console.log('  phase                       seconds   inserts/s   p50 ms   p99 ms   longest ms');
  for (const f of figures) {
    console.log(
      `  ${`${f.phase} ${f.label}`.padEnd(27)} ${fmt(f.seconds, 2).padStart(8)} ${fmt(f.insertsPerSecond, 0).padStart(11)} ${fmt(f.p50, 2).padStart(8)} ${fmt(f.p99, 2).padStart(8)} ${fmt(f.maxMs, 1).padStart(12)}`,
    );
  }
}

/** A database migrated as the release before partitioning left it. */
/**
 * @param {string} url
 * @param {string} migrations
 */
async function migrateBeforePartitioning(url, migrations) {
  const admin = createPool({ connectionString: url, applicationName: 'bench-setup', max: 1 });
  const setupDir = await mkdtemp(path.join(tmpdir(), 'bench-partitioning-setup-'));
  try {
    for (const file of (await readdir(migrations)).filter((f) => f < '009')) {
      await cp(path.join(migrations, file), path.join(setupDir, file));
    }
    await runMigrations(admin, setupDir);
  } finally {
    await admin.end();
    await rm(setupDir, { recursive: true, force: true });
  }
}

/** @param {import('./lib.mjs').RunOptions & { rows?: number }} options */
export async function run({ repoRoot, rows = defaultRows }) {
  const migrations = path.join(repoRoot, 'services', 'events', 'migrations');
  return withScratchDatabase(DATABASE, WRITERS + 1, async ({ clients, url }) => {
    const [loader, ...writerClients] = clients;
    await migrateBeforePartitioning(url, migrations);
    console.log(`\n## partitioning (${rows.toLocaleString('en-US')} Events, ${WRITERS} writers)`);
    const loadStart = Date.now();
    await load(loader, rows);
    const { rows: size } = await loader.query("select pg_total_relation_size('events') as bytes");
    const bytes = Number(size[0].bytes);
    console.log(
      `  loaded in ${fmt((Date.now() - loadStart) / 1000)} s: ${fmt(bytes / 1e9, 2)} GB, ${fmt(bytes / rows, 0)} bytes per Event`,
    );

    const writers = startWriters(writerClients);
    const baselineFrom = Date.now();
    await new Promise((resolve) => setTimeout(resolve, BASELINE_MS));
    const phases = [
      { phase: 'baseline', label: 'before any migration', from: baselineFrom, to: Date.now() },
      ...(await migratePhases(url, migrations)),
    ];
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await writers.stop();
    const { rows: check } = await loader.query(
      `select count(*)::int as n, count(distinct id)::int as ids,
              (select count(*)::int from events where event_name = 'During Migration') as written
       from events`,
    );

    const figures = phaseFigures(phases, writers.samples);
    printPhases(figures);
    const baseline = figures[0];
    const swap = figures.find((f) => f.phase === '012');
    const written = writers.samples.length;
    const problems = [
      ...(writers.failures() > 0 ? [`${writers.failures()} inserts failed`] : []),
      ...(check[0].written !== written
        ? [`${written} inserts answered, ${check[0].written} stored`]
        : []),
      ...(check[0].n !== check[0].ids ? ['an Event id is stored twice'] : []),
    ];
    const longest = figures
      .slice(1)
      .reduce((a, b) => (Number(b.maxMs) > Number(a.maxMs) ? b : a), figures[1]);
    console.log(
      `  the pause: the longest insert while the migrations ran took ${fmt(longest.maxMs, 1)} ms ` +
        `(during ${longest.phase}; during the swap ${fmt(swap?.maxMs ?? NaN, 1)} ms; p99 before any ` +
        `migration ${fmt(baseline.p99, 2)} ms); ${written} inserts answered, ${check[0].written} ` +
        `stored, ${writers.failures()} failed`,
    );
    return {
      startedAt: new Date(baselineFrom).toISOString(),
      cores: machineCores(),
      rows,
      bytes,
      phases: figures,
      pauseMs: longest.maxMs,
      pausePhase: longest.phase,
      swapPauseMs: swap?.maxMs,
      written,
      stored: check[0].written,
      failures: writers.failures(),
      ...(problems.length ? { problems } : {}),
    };
  });
}

/** @param {Awaited<ReturnType<typeof run>>} s */
export function chartData(s) {
  const base = s.phases[0];
  return {
    title: 'Herald partitioning benchmark: recording while a populated events table is partitioned',
    subtitle: `${s.startedAt}, ${s.cores} cores, ${s.rows.toLocaleString('en-US')} Events, ${WRITERS} writers; the longest insert ${fmt(s.pauseMs, 1)} ms (during ${s.pausePhase})`,
    measurements: s.phases.map((p, i) => ({
      name: p.phase,
      label: `${p.phase} ${p.label} (${fmt(p.seconds, 1)} s)`,
      group: i === 0 ? 'floor' : 'phases',
      primary: {
        value: p.insertsPerSecond,
        unit: 'inserts/s',
        ...(i > 0 && { floor: base.insertsPerSecond, floorShare: 1 }),
      },
      p50: p.p50,
      p99: p.p99,
    })),
    primaryPanel: { title: 'Inserts per second during each phase (the baseline: before any)' },
    legend: {
      floor: 'baseline: before any migration',
      floorShare: 'inserts/s before any migration',
    },
  };
}
