// The events benchmark's report: its tables on stdout (measurements and targets, the SDK beside
// the raw route, CPU per request, publish lag and outbox, memory, then the verdict and any
// errors) and its chart's input.
import { formatNumber } from '@herald/observability/chart.mjs';
import { LAG_P99_MS, PUBLISH_CPU_SHARE, RSS_MAX_MIB, targetsOf } from './events-targets.mjs';
import { COMPONENTS, isExtraRelay } from './procstat.mjs';

/** @typedef {import('./events.mjs').Summary} Summary */

const f = formatNumber;
/** @param {boolean | null | undefined} pass */
const mark = (pass) => (pass === true ? '✓' : pass === false ? '✗' : '?');

/**
 * Prints every table of the run's summary.
 * @param {Summary} s
 */
export function print(s) {
  printMeasurements(s);
  printSdk(s);
  printCpu(s);
  printPublishCpu(s);
  printLag(s);
  printMemory(s);
  printVerdict(s);
}

/** @param {Summary} s */
function printMeasurements(s) {
  console.log(
    `\n## events (${s.cores} cores, load average ${s.loadAverage.before.toFixed(2)} before, ` +
      `${s.loadAverage.after.toFixed(2)} after; ${s.connections} connections, ${s.seconds} s per ` +
      `measurement after ${s.warmupSeconds} s of warm-up; wrk (sdk-tracker: one SDK tracker per connection) through the ingress, ${s.keys} keys, ` +
      `${s.contacts} Contacts, ${s.organizations} organizations, a unique dedupKey per Event)`,
  );
  console.log(
    '| measurement | req/s | Events/s | p50 ms | p99 ms | x floor | failed | targets | result |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---|---|');
  for (const r of s.measurements) {
    const targets = r.targets
      .map((t) => `${t.what} ${mark(t.pass)}${t.pass === false ? ` (${f(t.got)})` : ''}`)
      .join('; ');
    const result = r.pass === null ? 'floor' : r.pass ? 'PASS' : 'FAIL';
    console.log(
      `| ${r.label} | ${f(r.requestsPerSecond)} | ${r.events === 0 ? '-' : f(r.eventsPerSecond)} | ` +
        `${f(r.p50)} | ${f(r.p99)} | ${r.floorRatio === null ? '-' : f(r.floorRatio)} | ` +
        `${r.failed} | ${targets || '-'} | ${result} |`,
    );
  }
}

/** @param {Summary} s */
function printSdk(s) {
  for (const r of s.measurements.filter((m) => m.sdk)) {
    const raw = s.measurements.find((m) => m.name === targetsOf(r)?.raw);
    console.log(
      `\n${r.name}: ${f(r.eventsPerSecond)} Events/s through @herald/client's tracker ` +
        `(${r.sdk.trackers} trackers, flushAt ${r.sdk.flushAt}, in its own Node process, ` +
        `${f(r.cpuMsPerRequest?.sdk)} ms of its CPU per batch)` +
        (raw
          ? `; the raw route, ${raw.name}: ${f(raw.eventsPerSecond)} Events/s (${f(raw.cpuMsPerRequest?.wrk)} ms of wrk's CPU per request): ${f(r.rawRatio)} ×`
          : ''),
    );
  }
}

/** @param {Summary} s */
function printCpu(s) {
  // The relays beside the first, in the measurements they ran in.
  const extraRelays = [
    ...new Set(s.measurements.flatMap((r) => Object.keys(r.cpuMsPerRequest).filter(isExtraRelay))),
  ].sort();
  const columns = ['wrk', 'sdk', 'bench', ...COMPONENTS, ...extraRelays, 'total', 'other'];
  console.log(
    "\nCPU ms per request (utime+stime from /proc; sdk = the SDK tracker's own Node process; bench = this Node process: the floor's pg load, the Kafka consumer, samplers; other = the rest of the machine)",
  );
  console.log(`| measurement | ${columns.join(' | ')} |`);
  console.log(`|---|${columns.map(() => '---:').join('|')}|`);
  for (const r of s.measurements) {
    const c = r.cpuMsPerRequest;
    /** @param {string} k */
    const cell = (k) => (Number.isFinite(c[k]) ? c[k].toFixed(3) : '-');
    console.log(`| ${r.name} | ${columns.map(cell).join(' | ')} |`);
  }
}

/** @param {Summary} s */
function printPublishCpu(s) {
  const rows = s.measurements.filter((r) => r.publishCpu);
  if (rows.length === 0) return;
  console.log(
    `\nPublishing CPU per recorded Event, µs (every relay, and the Kafka broker, from the table above), ` +
      `beside the same with kafkajs and one relay (recorded: no run can measure that relay again); ` +
      `target ≤ ${f(PUBLISH_CPU_SHARE)} of it`,
  );
  console.log(
    '| measurement | relays | relay | broker | relay + broker | kafkajs, one relay | × | target |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---|');
  for (const r of rows) {
    const p = /** @type {NonNullable<typeof r.publishCpu>} */ (r.publishCpu);
    console.log(
      `| ${r.name} | ${r.relayShares?.length ?? '?'} | ${f(p.relay)} | ${f(p.broker)} | ${f(p.total)} | ` +
        `${p.before === null ? '-' : f(p.before)} | ${p.ratio === null ? '-' : f(p.ratio)} | ` +
        `${p.ratio === null ? '-' : mark(p.ratio <= PUBLISH_CPU_SHARE)} |`,
    );
  }
}

/** @param {Summary} s */
function printLag(s) {
  const recording = s.measurements.filter((r) => r.kind === 'events');
  if (recording.length === 0) return;
  const { partitions, of } = s.lag.sample;
  console.log(
    `\nPublish lag (Kafka record timestamp − receivedAt; sampled: the Events on partitions ${partitions.join(', ')} of ${of}) ` +
      `and outbox depth (rows, every Tenant), targets p99 ≤ ${LAG_P99_MS} ms and a flat depth`,
  );
  console.log(
    '| measurement | relays | accepted | sampled | lag p50 ms | lag p99 ms | lag max ms | outbox start | max | end | lag p99 ≤ 1 s, outbox flat |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const r of recording) {
    const publishing = r.targets.filter(
      (t) => t.what.startsWith('lag') || t.what === 'outbox flat',
    );
    console.log(
      `| ${r.name} | ${r.relayShares?.length ?? '?'} | ${r.acceptedEvents} | ${r.lag.published} | ` +
        `${f(r.lag.p50)} | ${f(r.lag.p99)} | ${f(r.lag.max)} | ${r.outbox.start} | ${r.outbox.max} | ` +
        `${r.outbox.end} | ${publishing.every((t) => t.pass) ? '✓' : '✗'} |`,
    );
  }
  for (const r of recording.filter((x) => (x.relayShares?.length ?? 0) > 1)) {
    const total = r.relayShares.reduce((n, x) => n + x.published, 0);
    const shares = r.relayShares.map((x) => `${x.name} ${formatShare(x.share)}`).join(', ');
    console.log(`${r.name}: ${total} messages published during it, ${shares}`);
  }
  console.log(
    `all measured Events: lag p50 ${f(s.lag.p50)} ms, p99 ${f(s.lag.p99)} ms, max ${f(s.lag.max)} ms; ` +
      `outbox over the run: start ${s.outbox.start}, max ${s.outbox.max}, end ${s.outbox.end}`,
  );
}

/** @param {number} share */
const formatShare = (share) => (Number.isFinite(share) ? `${(share * 100).toFixed(0)} %` : '-');

/** @param {Summary} s */
function printMemory(s) {
  console.log(
    `\nMemory, MiB (RSS; PostgreSQL and nginx: PSS summed over their processes); target for Herald's processes: max ≤ ${RSS_MAX_MIB}`,
  );
  console.log('| process | start | max | end | target |');
  console.log('|---|---:|---:|---:|---|');
  for (const [proc, m] of Object.entries(s.memoryMiB)) {
    console.log(
      `| ${proc} | ${m.start.toFixed(0)} | ${m.max.toFixed(0)} | ${m.end.toFixed(0)} | ${m.pass === undefined ? '-' : mark(m.pass)} |`,
    );
  }
}

/**
 * The accepted and recorded Events, the targets missed, and the errors that make the figures
 * not the service's.
 * @param {Summary} s
 */
function printVerdict(s) {
  console.log(
    `\n${s.acceptedEvents} Events accepted and ${s.recordedEvents} recorded for the bench Tenant ` +
      `(warm-ups included; requests in flight when wrk stopped may add up to ${s.inFlightBound}).`,
  );
  const failing = [
    ...s.measurements.filter((r) => r.pass === false).map((r) => r.name),
    ...Object.entries(s.memoryMiB)
      .filter(([, m]) => m.pass === false)
      .map(([proc]) => `memory of ${proc}`),
  ];
  console.log(
    failing.length === 0 ? 'Every target met.' : `Targets missed by: ${failing.join(', ')}.`,
  );
  if (s.problems.length > 0) {
    const bar = '!'.repeat(100);
    console.log(`\n${bar}\nTHIS RUN HAD ERRORS; its figures are not the service's:`);
    for (const p of s.problems) console.log(`  - ${p}`);
    console.log(bar);
  }
}

/**
 * The chart's input (chart.mjs) from this benchmark's results.
 * @param {Summary} s
 */
export function chartData(s) {
  return {
    title: 'Herald events benchmark',
    subtitle:
      `${s.startedAt}, ${s.cores} cores, ${s.connections} connections, ${s.seconds} s per measurement; ` +
      `lag p99 ${formatNumber(s.lag?.p99)} ms; ${s.problems.length ? `${s.problems.length} PROBLEMS (see the JSON)` : 'no errors'}`,
    measurements: s.measurements.map((r) => ({
      name: r.name,
      label: r.label,
      group: r.group,
      primary: r.primary,
      p50: r.p50,
      p99: r.p99,
      p99Target: r.p99Target,
      pass: r.pass,
      failed: r.failed,
    })),
  };
}
