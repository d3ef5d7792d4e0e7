// Whether the side tables stay small under sustained load: the outbox and the dedup claims of the
// events database (and the contacts and billing outboxes) after many minutes at half capacity,
// against their size a few minutes in. The load is the fault suite's driver (tools/chaos): Contact
// upserts, single Events and arrays on the four Event routes, every Event with a dedupKey of its
// own, resent as a client should. Its capacity is measured first (16 lanes, no rate cap, 20 s)
// unless --rate gives the requests/s. Every 30 s it samples each table's size (table, indexes,
// TOAST), live and dead rows, vacuums, and the transaction holding each database's oldest snapshot.
import { formatNumber } from '@herald/observability/chart.mjs';
// @herald/chaos depends on this package (procstat.mjs): declaring the reverse would make a cycle
// turbo refuses, so its driver is reached through the workspace's node_modules as is.
import { newTenant } from '@herald/chaos/api.mjs';
import { createDriver } from '@herald/chaos/driver.mjs';
import { sideTablesSvg } from './side-tables-chart.mjs';
import { BOUND, oldestHorizon, openSampler, summarize } from './side-tables-sampler.mjs';

export const name = 'side-tables';
/** Long (minutes): run only when named, never as part of a plain `npm run bench`. */
export const byNameOnly = true;

const SAMPLE_EVERY_MS = 30_000;
const CAPACITY_SECONDS = 20;
const LANES = 16;
/** Resends end 45 s after the first send: acknowledged keys older than this are only counted. */
const LEDGER_KEEP_MS = 60_000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Requests/s and Events/s the driver sustains with the lanes and no rate cap.
 * @param {number} seconds
 */
async function measureCapacity(seconds) {
  const tenant = await newTenant(`bench side-tables capacity ${new Date().toISOString()}`);
  const driver = createDriver({ tenant, lanes: LANES, ratePerSecond: 100_000 });
  await driver.seed();
  const before = { requests: driver.totals.requests, events: driver.ledger.acked.size };
  driver.start();
  await sleep(seconds * 1000);
  const requests = (driver.totals.requests - before.requests) / seconds;
  const events = (driver.ledger.acked.size - before.events) / seconds;
  await driver.stop();
  return { requestsPerSecond: requests, eventsPerSecond: events };
}

/**
 * The driver's acknowledged Events, counted, with the keys past any resend dropped from its
 * ledger (a 30-minute run would otherwise keep millions of them).
 * @param {ReturnType<typeof createDriver>} driver
 */
function ackCounter(driver) {
  let dropped = 0;
  return {
    prune() {
      const old = Date.now() - LEDGER_KEEP_MS;
      for (const [key, at] of driver.ledger.acked) {
        if (at >= old) continue;
        driver.ledger.acked.delete(key);
        dropped += 1;
      }
    },
    total: () => dropped + driver.ledger.acked.size,
  };
}

/** @param {import('./lib.mjs').RunOptions} options */
export async function run({ minutes = 30, sampleAt = 5, rate, compact = false }) {
  const startedAt = new Date().toISOString();
  console.log(
    `\n== side-tables: ${minutes} min of load, sizes compared at ${sampleAt} min and at the end`,
  );
  const capacity = rate ? null : await measureCapacity(CAPACITY_SECONDS);
  const requestsPerSecond = rate ?? Math.max(1, Math.round(capacity.requestsPerSecond / 2));
  if (capacity) {
    console.log(
      `  capacity ${formatNumber(capacity.requestsPerSecond)} requests/s (${formatNumber(capacity.eventsPerSecond)} Events/s) with the fault suite's mix; load at half: ${requestsPerSecond} requests/s`,
    );
  }
  const tenant = await newTenant(`bench side-tables ${startedAt}`);
  const driver = createDriver({ tenant, lanes: LANES, ratePerSecond: requestsPerSecond });
  await driver.seed();
  const acks = ackCounter(driver);
  const sampler = await openSampler();
  /** @type {import('./side-tables-sampler.mjs').Sample[]} */
  const samples = [];
  const problems = [];
  let loadStart = Date.now();
  try {
    if (compact) {
      await sampler.compact();
      console.log('  compacted the tables first (VACUUM FULL)');
    }
    samples.push(await sampler.sample(0));
    loadStart = Date.now();
    driver.start();
    const end = loadStart + minutes * 60_000;
    while (Date.now() < end) {
      await sleep(Math.min(SAMPLE_EVERY_MS, end - Date.now()));
      acks.prune();
      const t = Math.round((Date.now() - loadStart) / 1000);
      samples.push(await sampler.sample(t));
      printProgress(samples.at(-1), acks.total());
    }
  } finally {
    await driver.stop();
    await sampler.close();
  }
  const seconds = (Date.now() - loadStart) / 1000;
  const errors = Object.entries(driver.totals.errors).filter(([status]) => status !== '429');
  if (errors.length > 0) {
    problems.push(`the load met errors: ${errors.map(([s, n]) => `${n} x ${s}`).join(', ')}`);
  }
  const summary = {
    startedAt,
    minutes,
    sampleAtMinutes: sampleAt,
    compacted: compact,
    capacity,
    requestsPerSecond,
    load: {
      requests: driver.totals.requests,
      eventsAccepted: acks.total(),
      eventsPerSecond: acks.total() / seconds,
      answers: driver.totals.answers,
      anomalies: driver.anomalies.slice(0, 10),
    },
    bound: BOUND,
    tables: summarize(samples, sampleAt * 60),
    oldestTransaction: oldestHorizon(samples),
    samples,
    problems,
  };
  print(summary);
  return summary;
}

/**
 * One line per sample while the load runs.
 * @param {import('./side-tables-sampler.mjs').Sample} s
 * @param {number} accepted
 */
function printProgress(s, accepted) {
  const parts = Object.entries(s.tables).map(
    ([series, t]) =>
      `${series} ${formatNumber(t.bytes / 2 ** 20)} MiB/${formatNumber(t.dead)} dead`,
  );
  // A transaction open this long stops every vacuum from cleaning what was deleted since.
  const held =
    s.horizon && s.horizon.transactionSeconds >= 10
      ? `  horizon held ${formatNumber(s.horizon.transactionSeconds)} s by ${s.horizon.application} in ${s.horizon.database}`
      : '';
  console.log(
    `  ${String(s.t).padStart(5)} s  ${formatNumber(accepted)} Events  ${parts.join('  ')}${held}`,
  );
}

/** @param {Awaited<ReturnType<typeof run>>} s */
function print(s) {
  console.log(
    `\n  ${formatNumber(s.load.eventsAccepted)} Events accepted (${formatNumber(s.load.eventsPerSecond)}/s), ${s.load.requests} requests at ${s.requestsPerSecond}/s`,
  );
  const header = [
    'table',
    'start MiB',
    'at sample',
    'end MiB',
    'end/sample',
    'grew MiB',
    'max dead',
    'vacuums',
    '',
  ];
  const rows = s.tables.map((t) => [
    t.series,
    formatNumber(t.startMiB),
    `${formatNumber(t.atSampleMiB)} (${Math.round(t.sampleAtSeconds / 60)} min)`,
    `${formatNumber(t.endMiB)} (${Math.round(t.endSeconds / 60)} min)`,
    Number.isFinite(t.ratio) ? t.ratio.toFixed(2) : 'n/a',
    formatNumber(t.grewMiB),
    formatNumber(t.maxDead),
    String(t.vacuums),
    t.bounded ? '✓' : `✗ (allowed ${formatNumber(t.allowedMiB)})`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  for (const r of [header, ...rows]) {
    console.log(
      `  ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')}`,
    );
  }
  console.log(
    `  bounded (✓): grew from the sample point to the end by at most ${BOUND.floorMiB} MiB or ${BOUND.share * 100} % of its size there`,
  );
  const h = s.oldestTransaction;
  if (h) {
    console.log(
      `  longest transaction holding the horizon: ${formatNumber(h.transactionSeconds)} s at ${h.t} s, ${h.application} in ${h.database} (${h.state}): ${h.query}`,
    );
  }
  for (const p of s.problems) console.log(`  ! ${p}`);
}

/**
 * The picture main.mjs writes beside the results: sizes and dead rows over the run.
 * @param {Awaited<ReturnType<typeof run>>} s
 */
export function chart(s) {
  const rate = s.capacity
    ? `${s.requestsPerSecond} requests/s, half of the ${formatNumber(s.capacity.requestsPerSecond)} measured`
    : `${s.requestsPerSecond} requests/s (--rate)`;
  return sideTablesSvg({
    title: `Herald side tables: ${s.minutes} min under load`,
    subtitle: `${s.startedAt}, ${rate}, ${formatNumber(s.load.eventsPerSecond)} Events/s accepted${s.compacted ? ', compacted first' : ''}; dashed: the sample point (${s.sampleAtMinutes} min)`,
    sampleAtSeconds: s.sampleAtMinutes * 60,
    durationSeconds: s.minutes * 60,
    samples: s.samples,
  });
}
