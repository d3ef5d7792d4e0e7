// The growth benchmark's figures from fixed measurements: the loaded database against the empty
// one and each target, the bytes per Event with what takes them, `--events`, and the chart drawn
// from them (a PNG of the promised size, not blank, every row named, pass, miss and floor drawn).
import assert from 'node:assert/strict';
import test from 'node:test';
import { chartSize, chartSvg, renderPng } from '@herald/observability/chart.mjs';
import { ROUNDS, roundOrder } from './growth-measurements.mjs';
import { compare, chartData, median, perEvent } from './growth-report.mjs';
import { eventCount } from './growth.mjs';

const round = (measurement, database, eventsPerSecond, p99) => ({
  measurement,
  database,
  round: 1,
  requestsPerSecond: measurement === 'single' ? eventsPerSecond : eventsPerSecond / 100,
  eventsPerSecond,
  p50: p99 / 3,
  p99,
  max: p99 * 2,
  failed: 0,
  statuses: { 202: 1 },
});

const upkeep = (monthMs, errors = []) => ({
  upkeep: { ms: 40, created: ['events_p20261210_000000'] },
  drops: [{ name: 'events_p20251127_000000', rows: 380_000, ms: monthMs }],
  monthMs,
  monthRows: 380_000,
  longestDropMs: monthMs,
  underLoad: true,
  recording: { requestsPerSecond: 1500, p50: 15, p99: 80, max: 200, failed: 0 },
  errors,
});

const measured = {
  // Singles on the loaded database at 0.8 of the empty one's median, arrays at 0.95.
  rounds: [
    round('single', 'empty', 1000, 40),
    round('single', 'loaded', 700, 60),
    round('single', 'empty', 1200, 50),
    round('single', 'loaded', 1060, 45),
    round('array-100', 'empty', 20_000, 300),
    round('array-100', 'loaded', 19_000, 320),
  ],
  exports: {
    empty: { latencies: Array.from({ length: 100 }, (_, i) => 10 + i / 10), unexpected: 0 },
    loaded: { latencies: Array.from({ length: 100 }, (_, i) => 20 + i / 2), unexpected: 0 },
  },
  sweeps: {
    empty: { ms: 80, deleted: 0, tenants: 10, failed: 0 },
    loaded: { ms: 4_000, deleted: 183_000, tenants: 10, failed: 0 },
  },
  upkeeps: { empty: upkeep(20), loaded: upkeep(300) },
};

const bytes = {
  partitions: 56,
  heap: 200e6,
  maps: 2e6,
  toast: 0.5e6,
  total: 410e6,
  pages: 24_400,
  indexes: [
    { name: 'events_pkey', definition: '…', bytes: 43e6 },
    { name: 'events_tenant_contact_idx', definition: '…', bytes: 103e6 },
    { name: 'events_tenant_received_idx', definition: '…', bytes: 58e6 },
  ],
  sample: {
    sampled: 50_000,
    row: 190,
    columns: { id: 16, tenant_id: 16, contact_id: 16, event_name: 16, properties: 62 },
  },
};

test('the loaded figures are read against the empty ones and the targets', () => {
  const c = compare(measured);
  const [single, array] = c.recording;
  assert.equal(single.empty.eventsPerSecond, 1100);
  assert.equal(single.loaded.eventsPerSecond, 880);
  assert.ok(Math.abs(single.share - 0.8) < 1e-9);
  assert.equal(single.pass, false);
  assert.equal(single.loaded.p99, 60, 'p99 is the highest of the rounds');
  assert.ok(Math.abs(array.share - 0.95) < 1e-9);
  assert.equal(array.pass, true);
  assert.equal(c.export.loaded.p99, 69, 'the 99th of 100, nearest rank');
  assert.equal(c.export.pass, true);
  assert.equal(c.monthDrop.pass, true);
  const failing = compare({ ...measured, upkeeps: { ...measured.upkeeps, loaded: upkeep(1_200) } });
  assert.equal(failing.monthDrop.pass, false, 'a month dropped in over 1 s misses');
  const refused = compare({
    ...measured,
    upkeeps: { ...measured.upkeeps, loaded: upkeep(30, ['lock timeout']) },
  });
  assert.equal(refused.monthDrop.pass, false, 'a drop that failed misses');
});

test('the median of the rounds: the middle one, or the mean of the middle two', () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([500, 1939, 2559, 1264]), (1264 + 1939) / 2);
  assert.ok(Number.isNaN(median([])));
});

test('bytes per Event: each part of the table over the Events, and what a row is made of', () => {
  const b = perEvent(bytes, 1e6);
  assert.equal(b.total, 410);
  assert.equal(b.heap, 200);
  assert.equal(b.toast, 0.5);
  assert.deepEqual(
    b.indexes.map((i) => [i.name, i.perEvent]),
    [
      ['events_pkey', 43],
      ['events_tenant_contact_idx', 103],
      ['events_tenant_received_idx', 58],
    ],
  );
  assert.equal(b.indexTotal, 204);
  assert.equal(b.row.header, 190 - 126, "the row less its columns' data");
  assert.equal(b.row.outside, 10, 'line pointer and free room');
});

test('each database runs first in half of the rounds', () => {
  const firsts = Array.from(
    { length: ROUNDS },
    (_, i) => roundOrder(['empty', 'loaded'], i + 1)[0],
  );
  assert.deepEqual(firsts.slice(0, 2), ['empty', 'loaded']);
  assert.equal(firsts.filter((f) => f === 'empty').length, ROUNDS / 2);
  assert.deepEqual(roundOrder(['empty', 'loaded'], 2), ['loaded', 'empty']);
});

test('--events takes a count or millions, and nothing else', () => {
  assert.equal(eventCount('20000000'), 20_000_000);
  assert.equal(eventCount('20M'), 20_000_000);
  assert.equal(eventCount('0.5m'), 500_000);
  for (const bad of ['', '0', '1.5', '-3', '20G', 'M', '1e6']) {
    assert.throws(() => eventCount(bad), /--events/, JSON.stringify(bad));
  }
});

test("the growth benchmark's chart: every measurement on both databases, the misses in red", async () => {
  const data = chartData({
    startedAt: '2026-01-01T00:00:00.000Z',
    cores: 2,
    events: 20_000_000,
    connections: 32,
    comparison: compare(measured),
    bytesPerEvent: perEvent(bytes, 1e6),
  });
  assert.deepEqual(
    data.measurements.map((m) => m.name),
    [
      'single-empty',
      'single-loaded',
      'array-100-empty',
      'array-100-loaded',
      'export-empty',
      'export-loaded',
      'month-empty',
      'month-loaded',
    ],
  );
  const svg = chartSvg(data);
  for (const m of data.measurements) assert.ok(svg.includes(`>${m.label}<`), m.label);
  assert.match(svg, /20,000,000 Events/);
  assert.match(svg, />month dropped in 300 ms, 20 M Events</);
  assert.match(svg, /410 bytes\/Event/);

  const { png, width, height, pixels } = await renderPng(svg);
  assert.deepEqual({ width, height }, chartSize(data.measurements.length));
  // A label too long for its column would run off the left edge: column 0 stays blank.
  for (let y = 0; y < height; y += 1) {
    const at = y * width * 4;
    assert.deepEqual([...pixels.subarray(at, at + 3)], [255, 255, 255], `row ${y} of column 0`);
  }
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const colours = new Set();
  let notWhite = 0;
  for (let i = 0; i < pixels.length; i += 4) {
    const rgb = (pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2];
    colours.add(rgb);
    if (rgb !== 0xffffff) notWhite += 1;
  }
  assert.ok(colours.size > 20, `only ${colours.size} colours: a blank picture`);
  const share = notWhite / (width * height);
  assert.ok(
    share > 0.02 && share < 0.9,
    `${(share * 100).toFixed(1)}% of the pixels are not white`,
  );
  // The empty database in the floor colour, the singles' miss in red, the rest in green.
  for (const rgb of [0x5b7fc7, 0xd03b3b, 0x2e9e4f]) {
    assert.ok(colours.has(rgb), `colour #${rgb.toString(16)} is drawn`);
  }
  const bars = [...svg.matchAll(/height="18" fill="(#[0-9a-f]{6})"/g)]
    .map(([, fill]) => fill)
    .filter((fill) => fill !== '#e3e6ea');
  assert.deepEqual(bars, [
    '#5b7fc7',
    '#d03b3b',
    '#5b7fc7',
    '#2e9e4f',
    '#5b7fc7',
    '#2e9e4f',
    '#5b7fc7',
    '#2e9e4f',
  ]);
});
