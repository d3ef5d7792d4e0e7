// Herald's service level objectives, defined once. `npm run generate` derives from them both the
// error-budget burn-rate alerts (the `herald.slo` group of charts/herald/files/alerts.yaml) and
// the load test's thresholds (loadtest/lib/slos.generated.js), so an alert and a k6 verdict never
// hold a route to different numbers. docs/metrics.md explains the objectives and the alerts.

/**
 * Each objective: the public routes it covers (a regular expression on the `http_route` label,
 * one for routes to leave out, and one on the request method where reads and writes of one path
 * differ), the load test's route
 * names it covers, the share of requests answered without a 5xx, and the share answered within a
 * latency. The latency must be a bucket boundary of http.server.request.duration (0.005 … 10 s)
 * for the alert to count it exactly.
 */
export const SLOS = [
  {
    name: 'events',
    title: 'Recording Events (single Events and arrays)',
    route: '/v1/events/.+',
    k6Routes: /^events\./,
    availability: 0.999,
    latency: { seconds: 1, ratio: 0.99 },
  },
  {
    name: 'token-exchange',
    title: 'The token exchange',
    route: '/v1/token',
    k6Routes: /^token$/,
    availability: 0.999,
    latency: { seconds: 1, ratio: 0.99 },
  },
  {
    name: 'contact-reads',
    title: 'Reading Contacts',
    route: '/v1/contacts/.+',
    method: 'GET',
    // A Contact's export streams for as long as the Contact's data takes: not a read.
    exclude: '.*/export',
    k6Routes: /^contacts\.get/,
    availability: 0.999,
    latency: { seconds: 0.5, ratio: 0.99 },
  },
  {
    name: 'contact-writes',
    title: 'Creating and updating Contacts',
    route: '/v1/contacts(/.+)?',
    method: 'PUT|POST',
    // Erasure reaches every service and may take long for a Contact with many Events.
    exclude: '.*/erase',
    k6Routes: /^contacts\.upsert/,
    availability: 0.999,
    latency: { seconds: 1, ratio: 0.99 },
  },
];

/** Latencies the alert can count exactly: the histogram's bucket boundaries, in seconds. */
export const LATENCY_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
];

/**
 * The Google SRE workbook's multiwindow, multi-burn-rate pairs for a 30-day budget: a long window
 * that proves the burn is real and a short one that proves it still goes on (so the alert
 * resolves soon after the burn stops). 14.4× over 1 h spends 2 % of the month's budget; 6× over
 * 6 h spends 5 %.
 */
export const BURN_WINDOWS = [
  { long: '1h', short: '5m', factor: 14.4, severity: 'critical', for: '2m' },
  { long: '6h', short: '30m', factor: 6, severity: 'warning', for: '15m' },
];

/** Checks the definitions; returns them. */
export function checkedSlos(slos = SLOS) {
  const names = new Set();
  for (const slo of slos) {
    if (names.has(slo.name)) throw new Error(`SLO ${slo.name} is defined twice`);
    names.add(slo.name);
    if (!(slo.availability > 0 && slo.availability < 1)) {
      throw new Error(`SLO ${slo.name}: availability ${slo.availability} is not a share`);
    }
    if (!(slo.latency.ratio > 0 && slo.latency.ratio < 1)) {
      throw new Error(`SLO ${slo.name}: latency ratio ${slo.latency.ratio} is not a share`);
    }
    if (!LATENCY_BUCKETS.includes(slo.latency.seconds)) {
      throw new Error(
        `SLO ${slo.name}: ${slo.latency.seconds} s is not a bucket boundary (${LATENCY_BUCKETS.join(', ')})`,
      );
    }
  }
  return slos;
}

/** The selector of an objective's requests, `extra` matchers added. */
function selector(slo, extra = '') {
  const method = slo.method ? `,http_request_method=~"${slo.method}"` : '';
  const exclude = slo.exclude ? `,http_route!~"${slo.exclude}"` : '';
  return `{ {{ .Scope.herald }},http_route=~"${slo.route}"${exclude}${method}${extra} }`;
}

/** The share of bad requests over `window`, as PromQL (one series per namespace). */
function badRatio(slo, sli, window) {
  const all = `sum by (namespace) (rate(http_server_request_duration_count${selector(slo)}[${window}]))`;
  if (sli === 'availability') {
    const bad = `sum by (namespace) (rate(http_server_request_duration_count${selector(slo, ',http_response_status_code=~"5.."')}[${window}]))`;
    return `${bad} / ${all}`;
  }
  const good = `sum by (namespace) (rate(http_server_request_duration_bucket${selector(slo, `,le="${slo.latency.seconds}"`)}[${window}]))`;
  return `1 - ${good} / ${all}`;
}

const percent = (share) => `${Number((share * 100).toFixed(3))}%`;

/**
 * The `herald.slo` rule group, as alerts.yaml's template text (the chart's tpl and the plain
 * renderer both take it): per objective and indicator, one alert per burn window, all named
 * HeraldErrorBudgetBurn and told apart by their labels.
 */
export function sloAlertGroup(slos = checkedSlos()) {
  const lines = ['  - name: herald.slo', '    rules:'];
  for (const slo of slos) {
    for (const sli of ['availability', 'latency']) {
      const budget = sli === 'availability' ? 1 - slo.availability : 1 - slo.latency.ratio;
      const objective =
        sli === 'availability'
          ? `${percent(slo.availability)} of requests answered without a 5xx`
          : `${percent(slo.latency.ratio)} of requests answered within ${slo.latency.seconds} s`;
      for (const w of BURN_WINDOWS) {
        const limit = Number((w.factor * budget).toPrecision(6));
        lines.push(
          '      - alert: HeraldErrorBudgetBurn',
          `        # ${slo.title}: ${objective}; ${w.factor}× the budget's rate over ${w.long} and ${w.short}.`,
          '        expr: |',
          `          (${badRatio(slo, sli, w.long)}) > ${limit}`,
          '          and',
          `          (${badRatio(slo, sli, w.short)}) > ${limit}`,
          `        for: ${w.for}`,
          '        labels:',
          `          severity: ${w.severity}`,
          `          slo: ${slo.name}`,
          `          sli: ${sli}`,
          `          window: ${w.long}`,
          '        annotations:',
          '          runbook_url: "{{ .Values.metrics.prometheusRule.runbookBaseUrl }}/HeraldErrorBudgetBurn.md"',
          '          summary: >-',
          `            {{\`${slo.title}: the ${sli} error budget burns ${w.factor}× too fast\`}}`,
          '          description: >-',
          `            {{\`Over the last ${w.long} and ${w.short}, more than ${percent(limit)} of the requests (now {{ $value | humanizePercentage }} over ${w.long}) missed the objective: ${objective}. At this rate the 30-day error budget lasts ${Number((30 / w.factor).toFixed(1))} days.\`}}`,
        );
      }
    }
  }
  return `${lines.join('\n')}\n`;
}

const BEGIN =
  '  # BEGIN herald.slo: generated from tools/observability/src/slos.mjs by npm run generate';
const END = '  # END herald.slo';

/** alerts.yaml (`current`) with its herald.slo group rendered anew, at the end of `groups`. */
export function alertsWithSloGroup(current, slos = checkedSlos()) {
  const block = `${BEGIN}\n${sloAlertGroup(slos)}${END}\n`;
  const start = current.indexOf(BEGIN);
  if (start < 0) return `${current.replace(/\n*$/, '\n')}\n${block}`;
  const end = current.indexOf(END, start);
  if (end < 0) throw new Error(`alerts.yaml has "${BEGIN.trim()}" without "${END.trim()}"`);
  return current.slice(0, start) + block + current.slice(end + END.length + 1);
}

/**
 * loadtest/lib/slos.generated.js: each objective with the load test's route names it covers, its
 * p99 in milliseconds and its highest share of failed requests (lib/thresholds.js reads it).
 */
export function k6Objectives(slos = checkedSlos()) {
  const entries = slos.map((slo) => {
    if (slo.latency.ratio !== 0.99) {
      throw new Error(`SLO ${slo.name}: k6 holds p(99); give its latency ratio 0.99`);
    }
    const errorRate = Number((1 - slo.availability).toPrecision(6));
    return `  { slo: '${slo.name}', routes: ${slo.k6Routes}, p99Ms: ${slo.latency.seconds * 1000}, errorRate: ${errorRate} },`;
  });
  return [
    '// Generated from tools/observability/src/slos.mjs by `npm run generate`: do not edit.',
    "// Each objective: the load test's route names it covers, its p99 (ms), its highest share of",
    '// failed requests.',
    'export const OBJECTIVES = [',
    ...entries,
    '];',
    '',
  ].join('\n');
}
