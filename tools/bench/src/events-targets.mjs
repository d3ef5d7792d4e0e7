// What the events benchmark holds each measurement to: its targets, its ratio to the floor, the
// memory of Herald's processes, and the problems that make a run's figures not the service's.
import { formatNumber } from '@herald/observability/chart.mjs';

/**
 * One measurement's targets. `floorShare`: the share of the matching floor's throughput a
 * measurement must reach; `raw` and `base` name the measurement of the same run it is held to.
 * @typedef {object} Target
 * @property {number} [requestsPerSecond]
 * @property {number} [eventsPerSecond]
 * @property {number} [p99] ms
 * @property {string} [floor]
 * @property {number} [floorShare]
 * @property {string} [raw]
 * @property {number} [rawShare]
 * @property {string} [base]
 * @property {number} [baseShare]
 */
/**
 * One target of one measurement, met (`pass`), missed, or not known (null: its floor did not run).
 * @typedef {{ what: string, got: number | null, want: number, pass: boolean | null }} Check
 */
/**
 * A measurement with its figures (events-drivers.mjs) and what evaluate() adds to them.
 * @typedef {import('./events-measurements.mjs').Measurement &
 *   import('./events-drivers.mjs').Figures & Evaluated} Result
 */
/**
 * @typedef {object} Evaluated
 * @property {{ published: number, p50: number, p99: number, max: number }} [lag]
 * @property {{ start: number, max: number, end: number, samples: number }} [outbox]
 * @property {number | null} [floorRatio]
 * @property {number | null} [rawRatio]
 * @property {number | null} [baseRatio]
 * @property {Check[]} [targets]
 * @property {boolean | null} [pass]
 * @property {{ unit: string, value: number, target: number | undefined,
 *   floor: number | null, floorShare: number | null }} [primary] what the chart draws
 * @property {number | null} [p99Target]
 * @property {ReturnType<typeof publishCpu>} [publishCpu]
 */

/**
 * The targets. `floorShare`: the share of the matching floor's throughput (1-row floor for
 * singles, 100-row floor for arrays, in Events/s) a measurement must reach.
 * @type {Record<string, Target>}
 */
const TARGETS = {
  single: { requestsPerSecond: 2000, p99: 50, floor: 'floor-1', floorShare: 0.2 },
  'array-100': { eventsPerSecond: 40000, floor: 'floor-100', floorShare: 0.5 },
  'array-1000': { eventsPerSecond: 50000, floor: 'floor-100' },
  // With two relays: the publish lag and the outbox, which every Event row is held to, only.
  'array-100-two-relays': { floor: 'floor-100' },
  'array-1000-two-relays': { floor: 'floor-100' },
  // The SDK (JSON, dedupKeys, fetch, in one Node process) costs at most half of the raw route.
  'sdk-tracker': { floor: 'floor-100', raw: 'array-100', rawShare: 0.5 },
  // Tracing as in production costs at most 15 % of the throughput, against the untraced
  // measurement run just before it.
  'traced-contact-id': { base: 'untraced-contact-id', baseShare: 0.85 },
  upsert: { requestsPerSecond: 1500 },
  read: { requestsPerSecond: 3000 },
};
const ROUTE_SPREAD = 0.25; // the other Event routes: within 25 % of by-contact-id
export const LAG_P99_MS = 1000;
/** Herald's own processes: each one's RSS at most this over the run (every relay's too). */
const HERALD_PROCESSES = ['auth', 'contacts', 'events', 'billing', 'events-relay'];
/** @param {string} proc */
const isHerald = (proc) => HERALD_PROCESSES.includes(proc) || /^events-relay-\d+$/.test(proc);
export const RSS_MAX_MIB = 256;

/**
 * Relay and Kafka broker CPU per published Event, µs, of the publishing path as it was with
 * kafkajs 2.2.4 and a single relay: what the path is held to (at most PUBLISH_CPU_SHARE of it).
 * Recorded with this benchmark on a 2-core machine of the kind it runs on; no run can measure it
 * again, since that relay is gone. Measurements with two relays are held to their one-relay name.
 */
export const PUBLISH_CPU_KAFKAJS = {
  'array-100': { relay: 27.1, broker: 5.0 },
  'array-1000': { relay: 32.3, broker: 5.6 },
};
export const PUBLISH_CPU_SHARE = 1 / 3;

/**
 * A recording measurement's relay CPU (every relay's) and Kafka broker CPU per Event it recorded,
 * µs, and the reference it is held to; null for other measurements or without CPU figures.
 * @param {{ name: string, kind?: string, events?: number,
 *   cpuMsPerRequest?: Record<string, number> }} r
 */
export function publishCpu(r) {
  const cpu = r.cpuMsPerRequest;
  if (r.kind !== 'events' || !r.events || !cpu || !Number.isFinite(cpu.kafka)) return null;
  const relayMs = Object.entries(cpu)
    .filter(([proc]) => proc === 'events-relay' || /^events-relay-\d+$/.test(proc))
    .reduce((sum, [, ms]) => sum + ms, 0);
  const perEvent = (/** @type {number} */ ms) => (ms * 1000) / /** @type {number} */ (r.events);
  const relay = perEvent(relayMs);
  const broker = perEvent(cpu.kafka);
  /** @type {{ relay: number, broker: number } | undefined} */
  const before = PUBLISH_CPU_KAFKAJS[r.name.replace(/-two-relays$/, '')];
  const total = relay + broker;
  return {
    relay,
    broker,
    total,
    before: before ? before.relay + before.broker : null,
    ratio: before ? total / (before.relay + before.broker) : null,
  };
}

/**
 * @param {{ name: string }} m
 * @returns {Target | undefined}
 */
export const targetsOf = (m) => (m.name.startsWith('single-') ? TARGETS.single : TARGETS[m.name]);

/**
 * Each Herald process's memory with `pass`: its RSS stayed at most RSS_MAX_MIB.
 * @param {Record<string, { start: number, max: number, end: number }>} memoryMiB
 * @returns {Record<string, { start: number, max: number, end: number, pass?: boolean }>}
 */
export function memoryTargets(memoryMiB) {
  return Object.fromEntries(
    Object.entries(memoryMiB).map(([proc, m]) => [
      proc,
      isHerald(proc) ? { ...m, pass: m.max <= RSS_MAX_MIB } : m,
    ]),
  );
}

/**
 * `r`'s targets, each {what, want, got, pass}, its floor ratio, whether it passed, and the
 * figure the chart draws.
 * @param {Result} r
 * @param {Record<string, Result>} byName the run's measurements
 */
export function evaluate(r, byName) {
  const t = targetsOf(r) ?? {};
  const floor = t.floor ? byName[t.floor] : null;
  r.floorRatio = floor ? r.eventsPerSecond / floor.eventsPerSecond : null;
  const list = [...ownChecks(r, t), ...comparedChecks(r, t, byName)];
  r.targets = list;
  r.pass = r.group === 'floor' ? null : list.every((x) => x.pass !== false);
  const perEvent = (r.kind === 'events' && r.events > 1) || r.rows > 1;
  r.primary = {
    unit: perEvent ? 'Events/s' : 'req/s',
    value: perEvent ? r.eventsPerSecond : r.requestsPerSecond,
    // The SDK's target comes from the raw route in the same run.
    target: perEvent
      ? (t.eventsPerSecond ??
        (r.rawRatio ? (r.eventsPerSecond / r.rawRatio) * t.rawShare : undefined))
      : t.requestsPerSecond,
    floor: floor ? (perEvent ? floor.eventsPerSecond : floor.requestsPerSecond) : null,
    floorShare: t.floorShare ?? null,
  };
  r.p99Target = t.p99 ?? null;
}

/**
 * The checks of `r`'s own figures: no failures, throughput, p99, its share of the floor.
 * @param {Result} r
 * @param {Target} t
 * @returns {Check[]}
 */
function ownChecks(r, t) {
  /** @type {Check[]} */
  const list = [];
  /** @type {(what: string, got: number | null, want: number, pass: boolean | null) => void} */
  const add = (what, got, want, pass) => {
    list.push({ what, want, got, pass });
  };
  if (r.group === 'service') add('failed requests = 0', r.failed, 0, r.failed === 0);
  if (t.requestsPerSecond) {
    const want = t.requestsPerSecond;
    add(`req/s ≥ ${formatNumber(want)}`, r.requestsPerSecond, want, r.requestsPerSecond >= want);
  }
  if (t.eventsPerSecond) {
    const want = t.eventsPerSecond;
    add(`Events/s ≥ ${formatNumber(want)}`, r.eventsPerSecond, want, r.eventsPerSecond >= want);
  }
  if (t.p99) add(`p99 ≤ ${t.p99} ms`, r.p99, t.p99, r.p99 <= t.p99);
  if (t.floorShare) {
    add(
      `≥ ${t.floorShare} × ${t.floor}`,
      r.floorRatio,
      t.floorShare,
      r.floorRatio === null ? null : r.floorRatio >= t.floorShare,
    );
  }
  return list;
}

/**
 * The checks against other measurements of the run (the raw route, the untraced base, the
 * by-contact-id route) and, for recorded Events, the publish lag and the outbox.
 * @param {Result} r
 * @param {Target} t
 * @param {Record<string, Result>} byName
 * @returns {Check[]}
 */
function comparedChecks(r, t, byName) {
  /** @type {Check[]} */
  const list = [];
  /** @type {(what: string, got: number | null, want: number, pass: boolean | null) => void} */
  const add = (what, got, want, pass) => {
    list.push({ what, want, got, pass });
  };
  if (t.raw) {
    // The SDK beside the raw route it wraps, measured in the same run.
    const raw = byName[t.raw];
    r.rawRatio = raw ? r.eventsPerSecond / raw.eventsPerSecond : null;
    add(
      `≥ ${t.rawShare} × ${t.raw}`,
      r.rawRatio,
      t.rawShare,
      r.rawRatio === null ? null : r.rawRatio >= t.rawShare,
    );
  }
  if (t.base) {
    const base = byName[t.base];
    r.baseRatio = base ? r.requestsPerSecond / base.requestsPerSecond : null;
    add(
      `≥ ${t.baseShare} × ${t.base}`,
      r.baseRatio,
      t.baseShare,
      r.baseRatio === null ? null : r.baseRatio >= t.baseShare,
    );
  }
  if (r.name.startsWith('single-') && r.name !== 'single-contact-id') {
    const base = byName['single-contact-id'];
    const share = base ? r.requestsPerSecond / base.requestsPerSecond : null;
    add(
      `within ${ROUTE_SPREAD * 100}% of by-contact-id`,
      share,
      1 - ROUTE_SPREAD,
      share === null ? null : share >= 1 - ROUTE_SPREAD,
    );
  }
  const publishing = publishCpu(r);
  r.publishCpu = publishing;
  if (publishing?.ratio != null) {
    add(
      `relay+broker CPU ≤ ⅓ × kafkajs`,
      publishing.ratio,
      PUBLISH_CPU_SHARE,
      publishing.ratio <= PUBLISH_CPU_SHARE,
    );
  }
  if (r.kind === 'events') {
    add(`lag p99 ≤ ${LAG_P99_MS} ms`, r.lag.p99, LAG_P99_MS, r.lag.p99 <= LAG_P99_MS);
    // Flat: the backlog grew by at most one second of this measurement's Events.
    const growth = r.outbox.end - r.outbox.start;
    add('outbox flat', growth, r.eventsPerSecond, growth <= Math.max(r.eventsPerSecond, 100));
  }
  return list;
}

/**
 * What makes a run's figures not the service's: requests that failed or never completed, Events
 * the tracker gave up on, recorded Events that do not match the accepted ones, and outbox rows
 * still unpublished after the wait.
 * @param {Result[]} results
 * @param {{ accepted: number, recorded: number, inFlightBound: number, unpublished: number }} counts
 * @returns {string[]}
 */
export function runProblems(results, { accepted, recorded, inFlightBound, unpublished }) {
  const problems = [];
  for (const r of results) {
    if (r.ok === 0) {
      problems.push(
        `${r.name}: no request completed in ${r.seconds.toFixed(1)} s (${r.requests} answered); lengthen --seconds or lower --connections`,
      );
    }
    if (r.failed > 0) {
      const statuses = Object.entries(r.statuses ?? {})
        .filter(([s]) => Number(s) >= 300)
        .map(([s, n]) => `${s}: ${n}`);
      const socket = Object.entries(r.socketErrors ?? {})
        .filter(([, n]) => n > 0)
        .map(([k, n]) => `${k} ${n}`);
      problems.push(
        `${r.name}: ${r.failed} of ${r.requests} requests failed (${[...statuses, ...socket].join(', ') || 'unexpected answers'}); its req/s counts 2xx answers only`,
      );
    }
  }
  for (const r of results) {
    if (r.sdk?.failedEvents > 0) {
      problems.push(
        `${r.name}: the tracker gave up on ${r.sdk.failedEvents} of ${r.sdk.tracked} Events (${r.sdk.errors.join('; ')})`,
      );
    }
  }
  if (recorded < accepted || recorded > accepted + inFlightBound) {
    problems.push(
      `${accepted} Events accepted (202, warm-ups included) but ${recorded} recorded for the bench Tenant` +
        ` (up to ${inFlightBound} more may be from requests in flight when wrk stopped)`,
    );
  }
  if (unpublished > 0) {
    problems.push(
      `${unpublished} outbox rows of the bench Tenant were still unpublished after the wait`,
    );
  }
  return problems;
}
