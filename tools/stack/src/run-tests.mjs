// `npm test`: every check and every test (unit, integration, end to end) against the real
// local stack, on a fresh clone too. Brings the stack up if needed and stops what it started.
// Node built-ins only: it runs before dependencies are installed.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ensureNodeModules, buildWorkspace } from './build.mjs';
import {
  dataDir,
  down,
  ingressUrl,
  kafkaBrokers,
  ports,
  prometheusUrl,
  redisClusterNodes,
  redisUrl,
  serviceUrl,
  up,
} from './index.mjs';
import { commandLine } from './args.mjs';
import { meetsNodeFloor, nodeFloorMessage } from './node-version.mjs';

commandLine(`Usage: npm test   (node tools/stack/src/run-tests.mjs)

Every check and test against the local stack, which it starts when needed and stops after.
Takes no options.`);
if (!meetsNodeFloor(process.version)) {
  process.stderr.write(`${nodeFloorMessage()}\n`);
  process.exit(1);
}

const resultsDir = path.join(dataDir, 'test-results');
/** Runs after every other package, alone (see below). */
const RESILIENCE = '@herald/resilience';
const started = Date.now();

function run(command, args, env = process.env) {
  console.log(`\n$ ${command} ${args.join(' ')}`);
  const result = spawnSync(command, args, { stdio: 'inherit', env });
  return result.status === 0;
}

/**
 * A check outside the workspaces that prints its own counts (`node --test`, the chart check): run
 * it, and write its counts where the jest packages write theirs, so the closing line counts them.
 */
function counted(name, command, args, env, counts) {
  console.log(`\n$ ${command} ${args.join(' ')}`);
  const result = spawnSync(command, args, { env, encoding: 'utf8' });
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  const ok = result.status === 0;
  fs.mkdirSync(resultsDir, { recursive: true });
  fs.writeFileSync(
    path.join(resultsDir, `${name}.json`),
    JSON.stringify({
      skipped: 0,
      ...counts(result.stdout),
      ...(ok ? {} : { failures: [{ test: `exit ${result.status}`, message: tail(result) }] }),
    }),
  );
  return ok;
}

/** What a failed check said last: its FAIL lines with their messages, else its output's end. */
function tail({ stdout, stderr }) {
  const lines = `${stdout}\n${stderr}`.split('\n');
  const fail = lines.findIndex((l) => /\bFAIL\b|^not ok/.test(l));
  const said = (fail >= 0 ? lines.slice(fail) : lines).filter((l) => l.trim());
  return fail >= 0 ? said.slice(0, 12) : said.slice(-12);
}

/** Schemathesis's closing line: `3137 generated, 3137 passed, 34 skipped` (test cases). */
const fuzzCounts = (stdout) => {
  const m = /(\d+) generated, (\d+) passed(?:, (\d+) skipped)?/.exec(stdout);
  const generated = Number(m?.[1] ?? 0);
  const passed = Number(m?.[2] ?? 0);
  const skipped = Number(m?.[3] ?? 0);
  return { passed, failed: Math.max(generated - passed - skipped, m ? 0 : 1), skipped };
};

/** `node --test` summary lines: `# pass 3` (TAP) or `ℹ pass 3` (spec reporter). */
const nodeTestCounts = (stdout) => {
  const count = (what) =>
    Number(new RegExp(`^(?:#|ℹ) ${what} (\\d+)$`, 'm').exec(stdout)?.[1] ?? 0);
  return { passed: count('pass'), failed: count('fail'), skipped: count('skipped') };
};

/** `chart-check: 10 passed, 0 failed (4.2s)`. */
const chartCheckCounts = (stdout) => {
  const m = /^chart-check: (\d+) passed, (\d+) failed/m.exec(stdout);
  return { passed: Number(m?.[1] ?? 0), failed: Number(m?.[2] ?? 1) };
};

function summarize() {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  /** Failed tests by name (jest packages list theirs) or, failing that, the check that failed. */
  const failures = [];
  const files = fs.existsSync(resultsDir) ? fs.readdirSync(resultsDir) : [];
  for (const file of files) {
    const r = JSON.parse(fs.readFileSync(path.join(resultsDir, file), 'utf8'));
    passed += r.passed;
    failed += r.failed;
    skipped += r.skipped;
    const name = r.name ?? path.basename(file, '.json');
    if (r.failures?.length)
      failures.push(...r.failures.map((f) => ({ ...f, test: `${name}: ${f.test}` })));
    else if (r.failed > 0)
      failures.push({ test: `${name}: ${r.failed} failed (see its output above)`, message: [] });
  }
  return { passed, failed, skipped, failures, packages: files.length };
}

fs.rmSync(resultsDir, { recursive: true, force: true });
// The tooling packages import each other by name, through node_modules.
await ensureNodeModules();

// Offline chart, manifest and image checks: no stack needed (builds helm & co. once, cached).
const chart = counted(
  'chart-check',
  'node',
  ['tools/k8s-lab/src/chart-check/main.mjs'],
  process.env,
  chartCheckCounts,
);

await buildWorkspace();
const { started: startedComponents } = await up({ build: false, quiet: true });

const failedSteps = [];
try {
  const env = {
    ...process.env,
    TURBO_TELEMETRY_DISABLED: '1',
    HERALD_TEST_RESULTS_DIR: resultsDir,
    HERALD_INGRESS_URL: ingressUrl,
    HERALD_PROMETHEUS_URL: prometheusUrl,
    HERALD_POSTGRES_URL: `postgres://herald@127.0.0.1:${ports.postgres}`,
    REDIS_URL: redisUrl,
    HERALD_REDIS_CLUSTER_NODES: redisClusterNodes,
    KAFKA_BROKERS: kafkaBrokers,
    AUTH_JWKS_URL: `${serviceUrl('auth')}/.well-known/jwks.json`,
  };
  const checks =
    run('npm', ['run', '-s', 'lint:root'], env) &&
    run('node', ['tools/generate/src/main.mjs', '--check'], env);
  const turbo = (...args) =>
    run('npx', ['turbo', 'run', 'lint', 'typecheck', 'test', '--continue', ...args], env);
  const packages = turbo('--concurrency=3', '--output-logs=new-only', `--filter=!${RESILIENCE}`);
  const nodeTests = counted(
    'node-test',
    'node',
    [
      '--test',
      // The tooling packages' own tests, beside their code, and the load test's.
      'tools/*/src/**/*.test.mjs',
      'loadtest/test/*.test.mjs',
    ],
    env,
    nodeTestCounts,
  );
  // The k6 smoke scenario against the stack, thresholds checked (loadtest/README.md), its metrics
  // written to the stack's Prometheus and found there.
  const smoke = run(
    'npm',
    ['run', '-s', 'loadtest:smoke', '--', '--', '--out', 'experimental-prometheus-rw'],
    env,
  );
  // Schemathesis from the served OpenAPI document, two minutes (tests/fuzz/src/main.mjs).
  const fuzz = counted(
    'fuzz',
    'node',
    ['tests/fuzz/src/main.mjs', '--seconds', '120'],
    env,
    fuzzCounts,
  );
  // The resilience tests stop and start shared infrastructure (Kafka, Redis): nothing else may
  // run meanwhile, so they come last, alone, one task at a time. They count in the closing line.
  const resilience = turbo('--concurrency=1', '--output-logs=new-only', `--filter=${RESILIENCE}`);
  const steps = { chart, checks, packages, nodeTests, smoke, fuzz, resilience };
  failedSteps.push(...Object.keys(steps).filter((step) => !steps[step]));
} finally {
  if (startedComponents.length > 0) await down({ only: startedComponents, quiet: true });
}

const { passed, failed, skipped, failures, packages } = summarize();
const seconds = Math.round((Date.now() - started) / 1000);
// Repeated at the end, where a truncated log still shows them.
if (failures.length > 0) console.log('\nfailed:');
for (const { test, message } of failures) {
  console.log(`  ✕ ${test}`);
  for (const line of message) console.log(`      ${line.slice(0, 200)}`);
}
console.log(
  `\n${packages} test packages, ${seconds} s${failedSteps.length ? ` (failed steps: ${failedSteps.join(', ')})` : ''}`,
);
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failedSteps.length === 0 && failed === 0 && passed > 0 ? 0 : 1);
