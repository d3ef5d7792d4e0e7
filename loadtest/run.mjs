// `node loadtest/run.mjs <smoke|load|stress|spike|soak> [-- <k6 run options>]`: runs one k6
// scenario and exits non-zero when its thresholds fail. Node built-ins, and the benchmark's renderer for the chart.
//
// - With BASE_URL, CLIENT_ID and CLIENT_SECRET set (staging), it runs against that target as is.
// - Without them, against the local stack: a fresh Tenant, KEYS secret keys (1 for smoke, else
//   2) with contacts:read contacts:write events:write, and an organization, made through the
//   operator API at HERALD_INGRESS_URL (default: the stack's ingress) with ADMIN_TOKEN (default:
//   .herald/admin-token).
//
// k6 is built from source by tools/stack/src/go-tools.mjs (K6_BINARY picks an installed k6 instead). It
// runs locally only: no cloud output, no usage report, no extension downloads. The summary JSON
// goes to .herald/loadtest/<scenario>-<time>.json, with k6's HTML report (.html) and a chart of
// throughput and latency per second (.png) beside it.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { UsageError, commandLine } from '@herald/stack/args.mjs';
import { dataDir, ingressUrl, prometheusUrl } from '@herald/stack/config.mjs';
import { htmlReportEnv, writeTimeSeriesPng } from './report.mjs';

const SCENARIOS = ['smoke', 'load', 'stress', 'spike', 'soak'];
const SCOPES = ['contacts:read', 'contacts:write', 'events:write'];
/** Summary files kept per scenario in .herald/loadtest (older ones are removed). */
const KEEP_SUMMARIES = 20;

const here = path.dirname(fileURLToPath(import.meta.url));
const outDir = path.join(dataDir, 'loadtest');

const USAGE = `Usage: node loadtest/run.mjs <${SCENARIOS.join('|')}> [-- <k6 run options>]
       npm run loadtest:smoke [-- -- <k6 run options>]   (npm takes the first --)

Runs one k6 scenario; exits non-zero when its thresholds fail. The target is BASE_URL with
CLIENT_ID and CLIENT_SECRET when set, else a fresh Tenant on the local stack (loadtest/README.md).`;

/** The scenario and the options for k6 after `--`; usage and exit on anything else. */
function parseCommand(argv) {
  const { positionals, rest } = commandLine(
    USAGE,
    {
      allowPositionals: true,
      passThrough: true,
      check({ positionals }) {
        if (positionals.length === 0) throw new UsageError('missing scenario');
        if (!SCENARIOS.includes(positionals[0])) {
          throw new UsageError(`unknown scenario ${positionals[0]}`);
        }
        if (positionals.length > 1) throw new UsageError(`unexpected argument ${positionals[1]}`);
      },
    },
    argv,
  );
  return { scenario: positionals[0], k6Args: rest };
}

/** The target from the environment (staging), or null for the local stack. */
function stagingTarget() {
  const names = ['BASE_URL', 'CLIENT_ID', 'CLIENT_SECRET'];
  const set = names.filter((n) => process.env[n]);
  if (set.length === 0) return null;
  if (set.length < names.length) {
    throw new UsageError(
      `${set.join(', ')} set but not ${names.filter((n) => !set.includes(n)).join(', ')}: ` +
        'set all three for a remote target, or none for the local stack',
    );
  }
  return { BASE_URL: process.env.BASE_URL };
}

function positiveInt(name, fallback) {
  const raw = process.env[name];
  if (!raw) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${name}=${raw} is not an integer >= 1`);
  return n;
}

/** A fresh Tenant on the local stack with `keyCount` secret keys and one organization. */
async function localTarget(scenario) {
  const baseUrl = (process.env.HERALD_INGRESS_URL || ingressUrl).replace(/\/+$/, '');
  const tokenFile = path.join(dataDir, 'admin-token');
  let adminToken = process.env.ADMIN_TOKEN;
  if (!adminToken) {
    if (!fs.existsSync(tokenFile)) {
      throw new UsageError(`no ${tokenFile}: start the local stack (npm start) or set ADMIN_TOKEN`);
    }
    adminToken = fs.readFileSync(tokenFile, 'utf8').trim();
  }
  const admin = async (route, body) => {
    let res;
    try {
      res = await fetch(`${baseUrl}/admin/v1${route}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
    } catch (err) {
      throw new UsageError(
        `the local stack does not answer at ${baseUrl} (${err.message}): npm start`,
      );
    }
    if (res.status !== 201) {
      throw new Error(`POST /admin/v1${route} answered ${res.status}: ${await res.text()}`);
    }
    return res.json();
  };

  const keyCount = positiveInt('KEYS', scenario === 'smoke' ? 1 : 2);
  const tenant = await admin('/tenants', {
    name: `loadtest ${scenario} ${new Date().toISOString()}`,
  });
  const keys = [];
  for (let i = 0; i < keyCount; i += 1) {
    keys.push(
      await admin(`/tenants/${tenant.id}/api-keys`, {
        kind: 'secret',
        name: `loadtest ${i + 1}`,
        scopes: SCOPES,
      }),
    );
  }
  const organization = await admin(`/tenants/${tenant.id}/organizations`, {
    externalId: `loadtest-${randomBytes(4).toString('hex')}`,
    name: 'Load test organization',
  });
  console.log(`local stack ${baseUrl}: tenant ${tenant.id}, ${keyCount} key(s)`);
  return {
    BASE_URL: baseUrl,
    CLIENT_ID: keys.map((k) => k.clientId).join(','),
    CLIENT_SECRET: keys.map((k) => k.secret).join(','),
    ORGANIZATION_EXTERNAL_ID: organization.externalId,
  };
}

async function k6Binary() {
  if (process.env.K6_BINARY) return process.env.K6_BINARY;
  const { ensureGoTool } = await import('@herald/stack/go-tools.mjs');
  return ensureGoTool('k6');
}

function runK6(binary, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: 'inherit', env });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

function pruneSummaries(scenario) {
  const own = fs
    .readdirSync(outDir)
    .filter((f) => f.startsWith(`${scenario}-`) && f.endsWith('.json'))
    .sort();
  for (const f of own.slice(0, -KEEP_SUMMARIES)) {
    // with its HTML report and chart
    for (const ext of ['.json', '.html', '.png']) {
      fs.rmSync(path.join(outDir, f.replace(/\.json$/, ext)), { force: true });
    }
  }
}

/** Threshold results and headline figures from k6's summary data. */
function digest(summary) {
  const m = summary.metrics;
  const thresholds = Object.values(m).flatMap((metric) =>
    Object.values(metric.thresholds ?? {}).map((t) => t.ok),
  );
  const failedRequests = m.http_req_failed?.values ?? { passes: 0, fails: 0 };
  return {
    passed: thresholds.filter(Boolean).length,
    failed: thresholds.filter((ok) => !ok).length,
    requests: failedRequests.passes + failedRequests.fails,
    failedRequests: failedRequests.passes,
    rateLimited: m.herald_rate_limited?.values.count ?? 0,
    checks: m.checks?.values ?? { passes: 0, fails: 0 },
    seconds: summary.state.testRunDurationMs / 1000,
  };
}

/** For `npm test`'s closing line: each threshold counts as one test. */
function recordTestResult(scenario, { passed, failed }) {
  const dir = process.env.HERALD_TEST_RESULTS_DIR;
  if (!dir) return;
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, `loadtest-${scenario}.json`),
    JSON.stringify({ name: `loadtest:${scenario}`, passed, failed, skipped: 0 }),
  );
}

async function main() {
  const { scenario, k6Args } = parseCommand(process.argv.slice(2));
  const binary = await k6Binary(); // first: a failed build should not leave a Tenant behind
  const target = stagingTarget() ?? (await localTarget(scenario));

  fs.mkdirSync(outDir, { recursive: true });
  const summaryFile = path.join(
    outDir,
    `${scenario}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
  );
  const stem = summaryFile.slice(0, -'.json'.length);
  const htmlReport = `${stem}.html`;
  const csvFile = `${stem}.csv`;
  const env = {
    ...process.env,
    ...target,
    ...htmlReportEnv(htmlReport),
    SUMMARY_JSON: summaryFile,
    K6_NO_USAGE_REPORT: 'true',
    K6_AUTO_EXTENSION_RESOLUTION: 'false',
  };
  // `-- --out experimental-prometheus-rw` against the local stack: its Prometheus receives the
  // run beside the services' own metrics (a staging run names its own with this variable).
  if (!stagingTarget() && !env.K6_PROMETHEUS_RW_SERVER_URL) {
    env.K6_PROMETHEUS_RW_SERVER_URL = `${prometheusUrl}/api/v1/write`;
  }
  delete env.ADMIN_TOKEN; // k6 needs only the customer keys
  const script = path.join(here, 'scenarios', `${scenario}.js`);
  const quiet = process.stdout.isTTY ? [] : ['--quiet']; // no progress bars in CI logs
  const code = await runK6(
    binary,
    ['run', '--no-usage-report', ...quiet, '--out', `csv=${csvFile}`, ...k6Args, script],
    env,
  );

  if (!fs.existsSync(summaryFile)) {
    console.error(`loadtest ${scenario}: k6 exited with ${code} and wrote no summary`);
    recordTestResult(scenario, { passed: 0, failed: 1 });
    return code || 1;
  }
  pruneSummaries(scenario);
  const d = digest(JSON.parse(fs.readFileSync(summaryFile, 'utf8')));
  const verdict = code === 0 ? 'passed' : `FAILED (k6 exit ${code})`;
  console.log(
    `loadtest ${scenario} ${verdict}: ${d.passed} thresholds passed, ${d.failed} failed; ` +
      `${d.requests} requests in ${d.seconds.toFixed(1)} s, ${d.failedRequests} failed, ` +
      `${d.rateLimited} rate-limited; checks ${d.checks.passes} passed, ${d.checks.fails} failed`,
  );
  console.log(`summary: ${path.relative(process.cwd(), summaryFile)}`);
  if (fs.existsSync(htmlReport)) console.log(`report: ${path.relative(process.cwd(), htmlReport)}`);
  if (fs.existsSync(csvFile)) {
    const png = `${stem}.png`;
    await writeTimeSeriesPng(csvFile, png, `k6 ${scenario}: throughput and latency`);
    // The per-request points were only the picture's input.
    fs.rmSync(csvFile, { force: true });
    console.log(`chart: ${path.relative(process.cwd(), png)}`);
  }
  // A run written to the local Prometheus must be found there.
  const remoteWritten =
    !stagingTarget() && k6Args.some((arg) => arg.includes('experimental-prometheus-rw'));
  const series = remoteWritten ? await k6SeriesIn(env.K6_PROMETHEUS_RW_SERVER_URL) : null;
  if (series !== null) console.log(`prometheus: ${series} k6 series received by remote write`);
  const lost = series === 0 ? 1 : 0;
  recordTestResult(scenario, {
    passed: d.passed + (series ? 1 : 0),
    failed: d.failed + (code !== 0 && d.failed === 0 ? 1 : 0) + lost,
  });
  return code || lost;
}

/** How many k6_* series the Prometheus behind `writeUrl` holds now. */
async function k6SeriesIn(writeUrl) {
  const query = new URL('/api/v1/query', writeUrl);
  query.searchParams.set('query', 'count({__name__=~"k6_.+"})');
  const res = await fetch(query, { signal: AbortSignal.timeout(5000) });
  const body = await res.json();
  return Number(body.data?.result?.[0]?.value?.[1] ?? 0);
}

try {
  process.exitCode = await main();
} catch (err) {
  console.error(err instanceof UsageError ? err.message : err);
  process.exitCode = 2;
}
