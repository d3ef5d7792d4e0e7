// The soak: steady load at half the measured capacity for a long while, sampling what would show
// a leak (memory, V8 heap, open files, PostgreSQL connections) or a backlog (outbox depth, its oldest
// row's age) every 10 s. Writes the samples as CSV and a PNG of each series, and fails when a
// series keeps growing: the fitted slope over the last two thirds of the run, projected over
// that stretch, is larger than the series' own tolerance.
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { memoryReading, stackPids } from '@herald/bench/procstat.mjs';
import { renderPng } from '@herald/observability/chart.mjs';
import { databaseUrl, dataDir, services } from '@herald/stack/index.mjs';
import { newTenant } from './api.mjs';
import { createDriver } from './driver.mjs';

const SAMPLE_EVERY_MS = 10_000;
/** The share of the run the slope test reads: its last two thirds (the first is warm-up). */
const TESTED_SHARE = 2 / 3;

/**
 * What each kind of series may grow by over the tested stretch before it counts as growing
 * without bound: an absolute floor (noise on a small value) or a share of its median.
 */
const TOLERANCE = {
  rss: { floor: 24, share: 0.25, unit: 'MiB' },
  heap: { floor: 16, share: 0.25, unit: 'MiB' },
  fds: { floor: 16, share: 0.25, unit: 'files' },
  connections: { floor: 4, share: 0.25, unit: 'connections' },
  outbox: { floor: 500, share: 0.5, unit: 'rows' },
  lag: { floor: 2, share: 0.5, unit: 's' },
};

/** Least-squares slope of `ys` against `xs` (per unit of x), or 0 with fewer than two points. */
export function slope(xs, ys) {
  const n = xs.length;
  if (n < 2) return 0;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i += 1) {
    num += (xs[i] - mx) * (ys[i] - my);
    den += (xs[i] - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : sorted[Math.floor(sorted.length / 2)];
};

/**
 * The verdict on one series `[{t (s), value}]` of a kind: the growth its slope projects over the
 * last two thirds, the allowed growth, and whether it stays within.
 */
export function growthVerdict(kind, samples) {
  const tested = samples.slice(Math.floor(samples.length * (1 - TESTED_SHARE)));
  const values = tested.map((s) => s.value);
  const span = tested.length > 1 ? tested.at(-1).t - tested[0].t : 0;
  const growth =
    slope(
      tested.map((s) => s.t),
      values,
    ) * span;
  const { floor, share, unit } = TOLERANCE[kind];
  const allowed = Math.max(floor, share * median(values));
  return { growth, allowed, unit, ok: growth <= allowed };
}

/**
 * A process's V8 heap in use (MiB), the sum of `v8js_memory_heap_used` over its heap spaces as
 * its metrics endpoint serves it; null when the endpoint does not answer (restarting).
 */
export function heapUsedMiB(exposition) {
  let bytes = 0;
  let seen = false;
  for (const line of exposition.split('\n')) {
    if (!line.startsWith('v8js_memory_heap_used')) continue;
    const match = /^v8js_memory_heap_used(?:\{[^}]*\})? ([0-9.eE+-]+)/.exec(line);
    if (match) {
      bytes += Number(match[1]);
      seen = true;
    }
  }
  return seen ? bytes / 2 ** 20 : null;
}

async function heapSample(service) {
  try {
    const res = await fetch(service.metricsUrl, { signal: AbortSignal.timeout(2000) });
    return res.ok ? heapUsedMiB(await res.text()) : null;
  } catch {
    return null;
  }
}

/** One sample of every series: `{name: value}` with names like `rss:events`. */
async function sample(pids, client) {
  const values = {};
  for (const service of services) {
    const mib = await heapSample(service);
    if (mib !== null) values[`heap:${service.name}`] = mib;
  }
  for (const [component, mib] of Object.entries(memoryReading(pids))) {
    // NaN: a child that exited while being read (Redis's rewrite fork): no sample this time.
    if (mib !== null && Number.isFinite(mib)) values[`rss:${component}`] = mib;
  }
  for (const [component, pid] of Object.entries(pids)) {
    try {
      values[`fds:${component}`] = fs.readdirSync(`/proc/${pid}/fd`).length;
    } catch {
      // gone for a moment (a restart): no sample
    }
  }
  const { rows } = await client.query(
    'select count(*)::int as n from pg_stat_activity where backend_type = $1',
    ['client backend'],
  );
  values['connections:postgres'] = rows[0].n;
  for (const database of ['herald_events', 'herald_contacts', 'herald_billing']) {
    const db = new pg.Client({ connectionString: databaseUrl(database) });
    await db.connect();
    try {
      const outbox = await db.query(
        `select count(*)::int as depth,
                coalesce(extract(epoch from now() - min(created_at)), 0)::float8 as lag
         from outbox`,
      );
      const name = database.replace('herald_', '');
      values[`outbox:${name}`] = outbox.rows[0].depth;
      values[`lag:${name}`] = outbox.rows[0].lag;
    } finally {
      await db.end();
    }
  }
  return values;
}

/** Requests a second the driver sustains with many lanes and no rate cap, over `seconds`. */
async function measureCapacity(seconds) {
  const tenant = await newTenant('soak capacity');
  const driver = createDriver({ tenant, lanes: 16, ratePerSecond: 10_000 });
  await driver.seed();
  driver.start();
  const before = driver.totals.requests;
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const rate = (driver.totals.requests - before) / seconds;
  await driver.stop();
  return rate;
}

/** The samples as CSV: one row per sample, one column per series. */
export function toCsv(samples, names) {
  const lines = [['t_seconds', ...names].join(',')];
  for (const s of samples) {
    lines.push([s.t, ...names.map((n) => (s.values[n] ?? '').toString())].join(','));
  }
  return `${lines.join('\n')}\n`;
}

const COLORS = { ok: '#2e9e4f', fail: '#d03b3b', grid: '#e3e6ea', text: '#1d232b' };

/** An SVG of small multiples: one panel per series, its line coloured by its verdict. */
export function soakSvg({ title, subtitle, series }) {
  const cols = 4;
  const panelW = 290;
  const panelH = 150;
  const top = 70;
  const rows = Math.ceil(series.length / cols);
  const width = cols * panelW + 20;
  const height = top + rows * panelH + 20;
  const parts = [
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="16" y="30" font-size="20" font-weight="bold" fill="${COLORS.text}">${title}</text>`,
    `<text x="16" y="52" font-size="12" fill="#5d6773">${subtitle}</text>`,
  ];
  series.forEach((s, i) => {
    const x0 = 10 + (i % cols) * panelW + 10;
    const y0 = top + Math.floor(i / cols) * panelH;
    const w = panelW - 30;
    const h = panelH - 50;
    const ts = s.points.map((p) => p.t);
    const vs = s.points.map((p) => p.value);
    const tMax = Math.max(1, ...ts);
    const vMax = Math.max(1e-9, ...vs) * 1.1;
    const pts = s.points
      .map(
        (p) =>
          `${(x0 + (p.t / tMax) * w).toFixed(1)},${(y0 + 30 + h - (p.value / vMax) * h).toFixed(1)}`,
      )
      .join(' ');
    const colour = s.verdict.ok ? COLORS.ok : COLORS.fail;
    parts.push(
      `<rect x="${x0}" y="${y0 + 30}" width="${w}" height="${h}" fill="none" stroke="${COLORS.grid}"/>`,
      `<text x="${x0}" y="${y0 + 14}" font-size="12" font-weight="bold" fill="${COLORS.text}">${s.name}</text>`,
      `<text x="${x0}" y="${y0 + 26}" font-size="10" fill="${colour}">max ${vMax / 1.1 < 10 ? (vMax / 1.1).toFixed(2) : Math.round(vMax / 1.1)} ${s.verdict.unit}; growth ${s.verdict.growth.toFixed(1)} (allowed ${s.verdict.allowed.toFixed(1)})</text>`,
      `<polyline points="${pts}" fill="none" stroke="${colour}" stroke-width="2"/>`,
    );
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="DejaVu Sans, Verdana, Arial, sans-serif">`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}

/**
 * Runs the soak for `minutes`: capacity first (20 s), then load at half of it while sampling.
 * Returns `{ok, csv, png, verdicts}` and writes the files under .herald/chaos/.
 */
export async function runSoak({ minutes, log = console.log }) {
  const capacity = await measureCapacity(20);
  const rate = Math.max(1, Math.round(capacity / 2));
  log(
    `soak: capacity ${capacity.toFixed(1)} requests/s with this mix; soaking at ${rate}/s for ${minutes} min`,
  );
  const tenant = await newTenant('soak');
  const driver = createDriver({ tenant, lanes: 16, ratePerSecond: rate });
  await driver.seed();
  const client = new pg.Client({ connectionString: databaseUrl('postgres') });
  await client.connect();
  const samples = [];
  const started = Date.now();
  driver.start();
  try {
    while (Date.now() - started < minutes * 60_000) {
      const pids = await stackPids();
      samples.push({
        t: Math.round((Date.now() - started) / 1000),
        values: await sample(pids, client),
      });
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_EVERY_MS));
    }
  } finally {
    await driver.stop();
    await client.end();
  }

  const names = [...new Set(samples.flatMap((s) => Object.keys(s.values)))].sort();
  const series = names.map((name) => {
    const points = samples
      .filter((s) => s.values[name] !== undefined)
      .map((s) => ({ t: s.t, value: s.values[name] }));
    return { name, points, verdict: growthVerdict(name.split(':')[0], points) };
  });
  const failing = series.filter((s) => !s.verdict.ok);
  const dir = path.join(dataDir, 'chaos');
  fs.mkdirSync(dir, { recursive: true });
  const stamp = new Date(started).toISOString().replace(/[:.]/g, '-');
  const csv = path.join(dir, `soak-${stamp}.csv`);
  fs.writeFileSync(csv, toCsv(samples, names));
  const { png } = await renderPng(
    soakSvg({
      title: `Soak: ${minutes} min at ${rate} requests/s (half of ${capacity.toFixed(0)})`,
      subtitle: `sampled every ${SAMPLE_EVERY_MS / 1000} s; red: grew beyond its tolerance over the last two thirds`,
      series,
    }),
  );
  const pngFile = path.join(dir, `soak-${stamp}.png`);
  fs.writeFileSync(pngFile, png);
  for (const s of series) {
    log(
      `  ${s.verdict.ok ? 'ok  ' : 'FAIL'} ${s.name.padEnd(24)} growth ${s.verdict.growth.toFixed(1)} ${s.verdict.unit} (allowed ${s.verdict.allowed.toFixed(1)})`,
    );
  }
  log(`soak: ${driver.totals.requests} requests; samples ${csv}; plot ${pngFile}`);
  return { ok: failing.length === 0, csv, png: pngFile, failing: failing.map((s) => s.name) };
}
