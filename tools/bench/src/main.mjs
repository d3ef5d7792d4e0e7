// `npm run bench`: benchmarks, not tests. Each prints its figures beside a baseline measured
// in the same run. Needs the local stack; brings it up if needed and stops what it started.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { UsageError, commandLine, positiveInteger } from '@herald/stack/args.mjs';
import { dataDir, down, ingressUrl, up } from '@herald/stack/index.mjs';
import { repoRoot } from '@herald/stack/config.mjs';
import { adminToken } from '@herald/stack/secrets.mjs';
import { NODE_VERSION as IMAGE_NODE_VERSION } from '@herald/k8s-lab/images/base.mjs';
import { servicesNode } from './procstat.mjs';
import { chartSvg, renderPng } from '@herald/observability/chart.mjs';
import * as eventRows from './event-rows.mjs';
import * as events from './events.mjs';
import * as growth from './growth.mjs';
import * as kafkaPublish from './kafka-publish.mjs';
import * as relayDrain from './relay-drain.mjs';
import * as partitioning from './partitioning.mjs';
import * as sideTables from './side-tables.mjs';
import * as tokenExchange from './token-exchange.mjs';

/**
 * A benchmark's results, as the JSON holds them; `problems`, when there are any, made the run
 * measure errors rather than the stack.
 * @typedef {Record<string, unknown> & { problems?: string[] }} BenchResults
 */
/**
 * What each benchmark module exports: its name, its run, and its chart's input from its results
 * (`chartData`, drawn by chart.mjs) or its own picture (`chart`, an SVG text). `byNameOnly`: a
 * long one, run only when named.
 * @typedef {object} Benchmark
 * @property {string} name
 * @property {number} [defaultConnections]
 * @property {boolean} [byNameOnly]
 * @property {(options: import('./lib.mjs').RunOptions) => Promise<BenchResults>} run
 * @property {(results: object) => Parameters<typeof chartSvg>[0]} [chartData]
 * @property {(results: object) => string} [chart]
 */
/** @type {Benchmark[]} */
const benchmarks = [
  tokenExchange,
  events,
  eventRows,
  kafkaPublish,
  relayDrain,
  sideTables,
  partitioning,
  growth,
];
const names = benchmarks.map((b) => b.name);
const defaultNames = benchmarks.filter((b) => !b.byNameOnly).map((b) => b.name);

const USAGE = `Usage: npm run bench -- [${names.join('|')} ...] [--seconds N] [--warmup N]
                       [--connections N] [--only MEASUREMENT,...]
                       [--minutes N] [--sample-at N] [--rate N] [--compact]
                       [--events N]

Runs the named benchmarks (all but ${names.filter((n) => !defaultNames.includes(n)).join(', ')} by default) against the local stack, which it
starts when needed, prints their tables and writes the figures to .herald/bench/results-<time>.json,
with a chart of each benchmark beside them (results-<time>-<benchmark>.png). Exits 1 when a run
had errors.
  --seconds N        length of each measurement (default 10)
  --warmup N         unmeasured seconds before each events measurement (default 2)
  --connections N    connections (events: wrk, or SDK trackers for sdk-tracker) or requests
                     (token-exchange) in flight
                     (default ${events.defaultConnections} for events and ${growth.name}, ${eventRows.defaultConnections} for event-rows, 8 for token-exchange)
  --only LIST        run only these events measurements (comma-separated; implies events):
                     ${events.measurementNames.join(', ')}
  --minutes N        ${sideTables.name}: minutes of load (default 30)
  --sample-at N      ${sideTables.name}: the minute whose sizes the end is compared with (default 5)
  --rate N           ${sideTables.name}: requests/s of the load (default: half the capacity it
                     measures first)
  --rows N           ${partitioning.name}: Events in the table before it is partitioned
                     (default ${partitioning.defaultRows})
  --events N         ${growth.name}: Events in the loaded database, a count or millions
                     (20000000 or 20M; default ${growth.defaultEvents / 1e6}M)
  --compact          ${sideTables.name}: VACUUM FULL the tables before the load (a short
                     exclusive lock on each: for a stack of your own or a quiet one)
  -h, --help         this text

The events benchmark installs wrk (Debian's package, with apt-get) when it is missing.
See docs/development.md, section Benchmarks, for what each figure means.`;

const { values, positionals } = commandLine(USAGE, {
  options: {
    seconds: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string' },
    only: { type: 'string' },
    minutes: { type: 'string', default: '30' },
    'sample-at': { type: 'string', default: '5' },
    rate: { type: 'string' },
    compact: { type: 'boolean', default: false },
    rows: { type: 'string', default: String(partitioning.defaultRows) },
    events: { type: 'string', default: String(growth.defaultEvents) },
  },
  allowPositionals: true,
  check({ values, positionals }) {
    positiveInteger('seconds', values.seconds);
    positiveInteger('warmup', values.warmup);
    if (values.connections !== undefined) positiveInteger('connections', values.connections);
    positiveInteger('minutes', values.minutes);
    positiveInteger('sample-at', values['sample-at']);
    if (values.rate !== undefined) positiveInteger('rate', values.rate);
    positiveInteger('rows', values.rows);
    growth.eventCount(values.events);
    if (Number(values['sample-at']) >= Number(values.minutes)) {
      throw new UsageError('--sample-at must come before the end of --minutes');
    }
    const unknown = positionals.filter((p) => !names.includes(p));
    if (unknown.length > 0) {
      throw new UsageError(
        `unknown benchmark ${unknown.join(', ')}; choose from: ${names.join(', ')}`,
      );
    }
    if (values.only !== undefined) {
      const wanted = values.only.split(',').filter(Boolean);
      const bad = wanted.filter((m) => !events.measurementNames.includes(m));
      if (wanted.length === 0 || bad.length > 0) {
        throw new UsageError(
          `unknown measurement ${bad.join(', ') || '(none given)'} in --only; choose from: ${events.measurementNames.join(', ')}`,
        );
      }
      if (positionals.length > 0 && !positionals.includes(events.name)) {
        throw new UsageError(`--only selects ${events.name} measurements; add ${events.name}`);
      }
    }
  },
});
const only = values.only?.split(',').filter(Boolean);
const wantedNames = positionals.length ? positionals : only ? [events.name] : defaultNames;
const selected = benchmarks.filter((b) => wantedNames.includes(b.name));

const { started } = await up({ quiet: true });
let problems = 0;
try {
  const seconds = Number(values.seconds);
  const serviceNode = await servicesNodeVersion();
  console.log(
    `node ${process.version} (services: ${serviceNode ?? 'unknown'}), ${new Date().toISOString()}, ${seconds} s per measurement`,
  );
  const major = (version) => Number(/^v?(\d+)/.exec(version ?? '')?.[1]);
  if (serviceNode && major(serviceNode) !== major(IMAGE_NODE_VERSION)) {
    console.log(
      `note: the services run Node ${serviceNode}, the images Node ${IMAGE_NODE_VERSION}; the figures differ by major ` +
        "(docs/development.md, Benchmarks, says how to measure with the images' Node)",
    );
  }
  const stamp = Date.now();
  /** @type {Record<string, BenchResults>} */
  const results = {};
  for (const bench of selected) {
    const connections = Number(values.connections ?? bench.defaultConnections ?? 8);
    results[bench.name] = await bench.run({
      ingressUrl,
      // ADMIN_TOKEN when set, else .herald/admin-token: what the stack just started with.
      adminToken: adminToken(),
      repoRoot,
      seconds,
      warmup: Number(values.warmup),
      connections,
      concurrency: connections,
      only,
      // kafka-publish adds event-rows' figures to its ceiling when both ran.
      earlier: results,
      minutes: Number(values.minutes),
      sampleAt: Number(values['sample-at']),
      rate: values.rate === undefined ? undefined : Number(values.rate),
      compact: values.compact,
      rows: Number(values.rows),
      events: growth.eventCount(values.events),
    });
    problems += results[bench.name].problems?.length ?? 0;
  }
  const out = path.join(dataDir, 'bench', `results-${stamp}.json`);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(
    out,
    JSON.stringify(
      { node: { bench: process.version, services: serviceNode }, ...results },
      null,
      2,
    ),
  );
  console.log(`\nraw figures: ${path.relative(process.cwd(), out)}`);
  // One picture per benchmark that ran, beside the raw figures.
  for (const bench of selected) {
    if (!results[bench.name]) continue;
    const svg = bench.chart
      ? bench.chart(results[bench.name])
      : chartSvg(bench.chartData(results[bench.name]));
    const chart = out.replace(/\.json$/, `-${bench.name}.png`);
    fs.writeFileSync(chart.replace(/\.png$/, '.svg'), svg);
    fs.writeFileSync(chart, (await renderPng(svg)).png);
    console.log(`chart: ${path.relative(process.cwd(), chart)}`);
  }
} finally {
  if (started.length > 0) await down({ only: started, quiet: true });
}
if (problems > 0) process.exitCode = 1;

/** The Node.js version the stack's services run, or null. */
async function servicesNodeVersion() {
  const binary = await servicesNode();
  if (!binary) return null;
  try {
    return execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}
