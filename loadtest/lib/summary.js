// The end-of-test summary: one line per route (requests, failures, latency) and every threshold
// that failed, on stdout; k6's full summary data as JSON in SUMMARY_JSON when set.
import exec from 'k6/execution';
import { summaryJson } from './config.js';
import { ROUTES } from './routes.js';

const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);
const ms = (v) => (v === undefined ? '-' : `${v < 10 ? v.toFixed(1) : Math.round(v)} ms`);

/** The observed value a threshold expression such as `p(95)<300` or `rate==0` is about. */
function observed(metric, source) {
  const stat = source.split(/[<>=!]/)[0].trim();
  const value = metric.values[stat];
  if (value === undefined) return '?';
  if (metric.contains === 'time') return ms(value);
  return metric.type === 'rate' ? `${(value * 100).toFixed(3)}%` : String(value);
}

function failedThresholds(metrics) {
  const failed = [];
  let passed = 0;
  for (const [name, metric] of Object.entries(metrics)) {
    for (const [source, { ok }] of Object.entries(metric.thresholds ?? {})) {
      if (ok) passed += 1;
      else failed.push(`  FAILED ${name} ${source} (was ${observed(metric, source)})`);
    }
  }
  return { passed, failed };
}

function routeLines(metrics) {
  const lines = [
    `  ${pad('route', 30)}${lpad('requests', 9)}${lpad('failed', 9)}${lpad('p50', 10)}` +
      `${lpad('p95', 10)}${lpad('p99', 10)}`,
  ];
  for (const route of ROUTES) {
    const failedRate = metrics[`http_req_failed{name:${route.name}}`]?.values;
    const latency = metrics[`herald_req_duration{name:${route.name}}`]?.values ?? {};
    const total = failedRate ? failedRate.passes + failedRate.fails : 0;
    lines.push(
      `  ${pad(route.name, 30)}${lpad(total, 9)}${lpad(failedRate?.passes ?? 0, 9)}` +
        `${lpad(ms(latency.med), 10)}${lpad(ms(latency['p(95)']), 10)}${lpad(ms(latency['p(99)']), 10)}`,
    );
  }
  return lines;
}

function failedChecks(rootGroup) {
  const all = [...(rootGroup.checks ?? [])];
  return all
    .filter((c) => c.fails > 0)
    .map((c) => `  check "${c.name}": ${c.fails} failed, ${c.passes} passed`);
}

export function textReport(data) {
  const m = data.metrics;
  const count = (name) => m[name]?.values.count ?? 0;
  const checks = m.checks?.values ?? { passes: 0, fails: 0 };
  const { passed, failed } = failedThresholds(m);
  const seconds = (data.state.testRunDurationMs / 1000).toFixed(1);
  return [
    '',
    `${exec.test.options.tags?.loadtest ?? 'test'}: ${seconds} s, ` +
      `${count('iterations')} iterations, ${count('dropped_iterations')} dropped`,
    ...routeLines(m),
    `  429 answers ${count('herald_rate_limited')}, resends ${count('herald_resends')}, ` +
      `token refreshes ${count('herald_token_refreshes')}, ` +
      `checks ${checks.passes} passed / ${checks.fails} failed`,
    ...failedChecks(data.root_group),
    `thresholds: ${passed} passed, ${failed.length} failed`,
    ...failed,
    '',
  ].join('\n');
}

export function handleSummary(data) {
  // setup()'s return value holds the access tokens: never write it anywhere.
  delete data.setup_data;
  const out = { stdout: textReport(data) };
  if (summaryJson) out[summaryJson] = JSON.stringify(data, null, 2);
  return out;
}
