// The growth benchmark's figures: the loaded database beside the empty one, each against its
// target, the bytes per Event with what takes them, the printed tables and the chart's input.
import { fmt, stats } from './lib.mjs';
import { RECORDING } from './growth-measurements.mjs';

/** Recording on the loaded database, as a share of the empty one's Events/s. */
export const RECORDING_SHARE = 0.9;
export const EXPORT_P99_MS = 100;
export const MONTH_DROP_MS = 1_000;

/**
 * The median of `values`: the middle one, or the mean of the middle two.
 * @param {number[]} values
 */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return NaN;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * A measurement's figures on one database over its rounds: Events/s, requests/s and p50 the
 * median of the rounds' (one round disturbed by other work on the machine moves it little), p99
 * and max the highest of them, failed requests summed.
 * @param {{ measurement: string, database: string, eventsPerSecond: number,
 *   requestsPerSecond: number, p50: number, p99: number, max: number, failed: number }[]} rounds
 * @param {string} measurement
 * @param {string} database
 */
function recordingFigures(rounds, measurement, database) {
  const own = rounds.filter((r) => r.measurement === measurement && r.database === database);
  return {
    eventsPerSecond: median(own.map((r) => r.eventsPerSecond)),
    requestsPerSecond: median(own.map((r) => r.requestsPerSecond)),
    p50: median(own.map((r) => r.p50)),
    p99: Math.max(...own.map((r) => r.p99)),
    max: Math.max(...own.map((r) => r.max)),
    failed: own.reduce((s, r) => s + r.failed, 0),
  };
}

/**
 * The figures of both databases side by side, each with its target met or not.
 * @param {object} m
 * @param {Awaited<ReturnType<typeof import('./growth-measurements.mjs').recordingRounds>>} m.rounds
 * @param {Record<string, { latencies: number[], unexpected: number }>} m.exports
 * @param {Record<string, Awaited<ReturnType<typeof import('./growth-measurements.mjs').sweep>>>} m.sweeps
 * @param {Record<string, Awaited<ReturnType<typeof import('./growth-measurements.mjs').upkeepUnderLoad>>>} m.upkeeps
 */
export function compare({ rounds, exports, sweeps, upkeeps }) {
  const recording = RECORDING.map((r) => {
    const empty = recordingFigures(rounds, r.name, 'empty');
    const loaded = recordingFigures(rounds, r.name, 'loaded');
    const share = loaded.eventsPerSecond / empty.eventsPerSecond;
    return { ...r, empty, loaded, share, pass: share >= RECORDING_SHARE };
  });
  const exportOf = (/** @type {string} */ side) => {
    const { latencies, unexpected } = exports[side];
    return { ...stats(latencies), unexpected };
  };
  const exported = { empty: exportOf('empty'), loaded: exportOf('loaded') };
  return {
    recording,
    export: { ...exported, pass: exported.loaded.p99 <= EXPORT_P99_MS },
    sweep: sweeps,
    upkeep: upkeeps,
    monthDrop: { pass: upkeeps.loaded.monthMs <= MONTH_DROP_MS && !upkeeps.loaded.errors.length },
  };
}

/**
 * Bytes per Event of each part of the table, and what a row's columns take.
 * @param {Awaited<ReturnType<typeof import('./growth-database.mjs').tableBytes>>} bytes
 * @param {number} rows the Events in the table
 */
export function perEvent(bytes, rows) {
  const per = (/** @type {number} */ n) => n / Math.max(rows, 1);
  const indexes = bytes.indexes.map((i) => ({ ...i, perEvent: per(i.bytes) }));
  const indexBytes = bytes.indexes.reduce((s, i) => s + i.bytes, 0);
  const columns = Object.values(bytes.sample.columns).reduce((s, n) => s + n, 0);
  return {
    rows,
    partitions: bytes.partitions,
    total: per(bytes.total),
    heap: per(bytes.heap),
    maps: per(bytes.maps),
    toast: per(bytes.toast),
    indexes,
    indexTotal: per(indexBytes),
    row: {
      sampled: bytes.sample.sampled,
      tuple: bytes.sample.row,
      columns: bytes.sample.columns,
      // The tuple's header, null bitmap and alignment padding: the row less its columns' data.
      header: bytes.sample.row - columns,
      // Per row in the heap but outside the tuple: its line pointer, the rest of its page
      // (fill and page headers).
      outside: per(bytes.heap) - bytes.sample.row,
    },
  };
}

const ok = (/** @type {boolean} */ pass) => (pass ? '✓' : '✗');

/** @param {ReturnType<typeof perEvent>} b */
function printBytes(b) {
  console.log(
    `  bytes per Event (${b.rows.toLocaleString('en-US')} Events, ${b.partitions} partitions): ` +
      `${fmt(b.total, 0)} in all`,
  );
  console.log(
    `    heap ${fmt(b.heap, 0)}: the row ${fmt(b.row.tuple, 0)} (header, null bitmap and padding ` +
      `${fmt(b.row.header, 0)}; ${Object.entries(b.row.columns)
        .map(([c, n]) => `${c} ${fmt(n, 1)}`)
        .join(', ')}), line pointer and free room of its page ${fmt(b.row.outside, 0)}`,
  );
  for (const i of b.indexes) console.log(`    index ${i.name} ${fmt(i.perEvent, 1)}`);
  console.log(`    TOAST ${fmt(b.toast, 1)}, free-space and visibility maps ${fmt(b.maps, 1)}`);
}

/**
 * @param {ReturnType<typeof compare>} c
 * @param {ReturnType<typeof perEvent>} bytes
 */
export function print(c, bytes) {
  printBytes(bytes);
  console.log('  measurement                        empty      loaded   loaded/empty  target');
  const line = (
    /** @type {string} */ what,
    /** @type {number} */ a,
    /** @type {number} */ b,
    /** @type {string} */ target,
    digits = 0,
  ) =>
    console.log(
      `  ${what.padEnd(31)} ${fmt(a, digits).padStart(9)} ${fmt(b, digits).padStart(11)} ${fmt(b / a, 2).padStart(14)}  ${target}`,
    );
  for (const r of c.recording) {
    line(
      `${r.label}, Events/s`,
      r.empty.eventsPerSecond,
      r.loaded.eventsPerSecond,
      `≥ ${RECORDING_SHARE} ${ok(r.pass)}`,
    );
    line(`${r.label}, p99 ms`, r.empty.p99, r.loaded.p99, '', 1);
  }
  line('export of 1,000 Events, p50 ms', c.export.empty.p50, c.export.loaded.p50, '', 1);
  line(
    'export of 1,000 Events, p99 ms',
    c.export.empty.p99,
    c.export.loaded.p99,
    `≤ ${EXPORT_P99_MS} ms ${ok(c.export.pass)}`,
    1,
  );
  line(
    'retention sweep, ms',
    c.sweep.empty.ms,
    c.sweep.loaded.ms,
    `(${c.sweep.loaded.deleted.toLocaleString('en-US')} Events of ${c.sweep.loaded.tenants} Tenants)`,
  );
  line(
    'upkeep (1 partition created), ms',
    c.upkeep.empty.upkeep.ms,
    c.upkeep.loaded.upkeep.ms,
    '',
    1,
  );
  line(
    `a month dropped (${c.upkeep.loaded.drops.length} partitions), ms`,
    c.upkeep.empty.monthMs,
    c.upkeep.loaded.monthMs,
    `≤ ${MONTH_DROP_MS} ms ${ok(c.monthDrop.pass)} (${Math.round(c.upkeep.loaded.monthRows).toLocaleString('en-US')} Events)`,
    1,
  );
  line(
    '  recording meanwhile, req/s',
    c.upkeep.empty.recording.requestsPerSecond,
    c.upkeep.loaded.recording.requestsPerSecond,
    '',
  );
  line(
    '  its longest request, ms',
    c.upkeep.empty.recording.max,
    c.upkeep.loaded.recording.max,
    '',
    1,
  );
}

/**
 * The chart: each measurement on the loaded database below the same on the empty one (the
 * floor, blue), recording against 0.9 of it, the export against its p99 target.
 * @param {{ startedAt: string, cores: number, events: number, connections: number,
 *   comparison: ReturnType<typeof compare>, bytesPerEvent: ReturnType<typeof perEvent> }} s
 */
export function chartData(s) {
  const c = s.comparison;
  const n = s.events.toLocaleString('en-US');
  // Short enough for the label column: 20 M rather than 20,000,000.
  const loaded = `${s.events >= 1e6 ? `${s.events / 1e6} M` : n} Events`;
  const measurements = [];
  for (const r of c.recording) {
    const row = (/** @type {'empty' | 'loaded'} */ side) => ({
      name: `${r.name}-${side}`,
      label: `${r.label}, ${side === 'empty' ? 'empty' : loaded}`,
      group: side === 'empty' ? 'floor' : 'growth',
      primary: {
        value: r[side].eventsPerSecond,
        unit: 'Events/s',
        ...(side === 'loaded' && { floor: r.empty.eventsPerSecond, floorShare: RECORDING_SHARE }),
      },
      p50: r[side].p50,
      p99: r[side].p99,
      pass: side === 'loaded' ? r.pass : null,
      failed: r[side].failed,
    });
    measurements.push(row('empty'), row('loaded'));
  }
  for (const side of /** @type {const} */ (['empty', 'loaded'])) {
    const e = c.export[side];
    measurements.push({
      name: `export-${side}`,
      label: `export of 1,000 Events, ${side === 'empty' ? 'empty' : loaded}`,
      group: side === 'empty' ? 'floor' : 'growth',
      primary: { value: 1000 / e.mean, unit: 'exports/s, one at a time' },
      p50: e.p50,
      p99: e.p99,
      p99Target: EXPORT_P99_MS,
      pass: side === 'loaded' ? c.export.pass : null,
      failed: e.unexpected,
    });
  }
  for (const side of /** @type {const} */ (['empty', 'loaded'])) {
    const u = c.upkeep[side];
    measurements.push({
      name: `month-${side}`,
      label: `month dropped in ${fmt(u.monthMs, 0)} ms, ${side === 'empty' ? 'empty' : loaded}`,
      group: side === 'empty' ? 'floor' : 'growth',
      primary: { value: u.recording.requestsPerSecond, unit: 'req/s' },
      p50: u.recording.p50,
      p99: u.recording.p99,
      pass: side === 'loaded' ? c.monthDrop.pass : null,
      failed: u.recording.failed + u.errors.length,
    });
  }
  const b = s.bytesPerEvent;
  return {
    title: `Herald growth benchmark: ${n} Events against an empty database`,
    subtitle:
      `${s.startedAt}, ${s.cores} cores, ${s.connections} connections; ${fmt(b.total, 0)} bytes/Event ` +
      `(heap ${fmt(b.heap, 0)}, indexes ${fmt(b.indexTotal, 0)}); retention sweep ` +
      `${fmt(c.sweep.loaded.ms / 1000, 1)} s for ${c.sweep.loaded.deleted.toLocaleString('en-US')} Events`,
    measurements,
    primaryPanel: { title: 'Loaded database below the empty one (each bar on its own scale)' },
    legend: {
      floor: 'the empty database, same run',
      floorShare: `${RECORDING_SHARE} of the empty database (recording)`,
    },
  };
}
