// The benchmark's chart from a fixed result: a PNG of the size chartSize() promises, with real
// content (not one flat colour), and every measurement named in the SVG.
import assert from 'node:assert/strict';
import test from 'node:test';
import { chartSize, chartSvg, renderPng } from '@herald/observability/chart.mjs';
import { chartData as eventRowsChart } from './event-rows.mjs';
import { MEASUREMENTS } from './events.mjs';
import { ceiling, chartData as kafkaPublishChart } from './kafka-publish.mjs';
import { chartData as tokenExchangeChart } from './token-exchange.mjs';

/** The distinct RGB colours of RGBA pixels. */
function coloursOf(pixels) {
  const colours = new Set();
  for (let i = 0; i < pixels.length; i += 4) {
    colours.add((pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2]);
  }
  return colours;
}

const row = (name, label, group, primary, p99, extra = {}) => ({
  name,
  label,
  group,
  primary,
  p50: p99 / 3,
  p99,
  p99Target: null,
  pass: null,
  failed: 0,
  ...extra,
});

const results = {
  title: 'Herald events benchmark',
  subtitle: 'fixed figures for the chart test',
  measurements: [
    row('floor-1', 'floor: INSERT, 1 row', 'floor', { unit: 'req/s', value: 9000 }, 4.1),
    row(
      'single-contact-id',
      'single, by-contact-id',
      'service',
      { unit: 'req/s', value: 2400, target: 2000, floor: 9000, floorShare: 0.2 },
      38,
      { p99Target: 50, pass: true },
    ),
    row(
      'array-100',
      '100-Event arrays & <more>',
      'service',
      { unit: 'Events/s', value: 21000, target: 40000, floor: 60000, floorShare: 0.5 },
      180,
      { pass: false, failed: 12 },
    ),
    row('read', 'reads, GET contact', 'service', { unit: 'req/s', value: NaN }, NaN),
  ],
};

test('the chart is a PNG of the expected size with content, naming every measurement', async () => {
  const svg = chartSvg(results);
  const escaped = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  for (const m of results.measurements) {
    assert.ok(svg.includes(`>${escaped(m.label)}<`), `the SVG names ${m.label}`);
  }

  const { png, width, height, pixels } = await renderPng(svg);
  const expected = chartSize(results.measurements.length);
  assert.deepEqual({ width, height }, expected);
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  // IHDR: width and height, big-endian, at bytes 16 and 20.
  assert.equal(png.readUInt32BE(16), expected.width);
  assert.equal(png.readUInt32BE(20), expected.height);

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
  // The pass, fail and floor colours of the bars are all there.
  for (const rgb of [0x2e9e4f, 0xd03b3b, 0x5b7fc7]) {
    assert.ok(colours.has(rgb), `colour #${rgb.toString(16)} is drawn`);
  }
});

test("every events measurement's label is drawn whole, right of the picture's left edge", async () => {
  const svg = chartSvg({
    title: 'labels',
    subtitle: 'every events measurement',
    measurements: MEASUREMENTS.map((m) =>
      row(m.name, m.label, m.group, { unit: 'req/s', value: 1000 }, 10),
    ),
  });
  const { width, height, pixels } = await renderPng(svg);
  // A label too long for its column runs off the left edge: its glyphs would touch column 0.
  const leftColumn = Array.from({ length: height }, (_, y) =>
    pixels.subarray(y * width * 4, y * width * 4 + 4),
  ).flatMap((pixel) => [...pixel]);
  assert.deepEqual([...coloursOf(leftColumn)], [0xffffff], 'the leftmost column is blank');
});

test("the token exchange benchmark's results draw as a chart with every measurement, the hash as its floor", async () => {
  const measurement = (name, label, group, value, p99) => ({
    name,
    label,
    group,
    samples: 100,
    primary: { value, unit: 'per s' },
    p50: p99 / 2,
    p99,
  });
  const data = tokenExchangeChart({
    startedAt: '2026-01-01T00:00:00.000Z',
    cores: 2,
    concurrency: 8,
    seconds: 6,
    measurements: [
      measurement('argon2-verify', 'argon2id verify, in-process (baseline)', 'floor', 40, 30),
      measurement('exchange-single', 'exchange 200, 1 at a time', 'exchange', 35, 40),
      measurement('guard-refused', 'exchange 429 refused by the guard', 'exchange', 900, 12),
    ],
  });
  const svg = chartSvg(data);
  for (const m of data.measurements) assert.ok(svg.includes(`>${m.label}<`), m.label);
  const { width, height, pixels } = await renderPng(svg);
  assert.deepEqual({ width, height }, chartSize(3));
  const colours = coloursOf(pixels);
  assert.ok(colours.has(0x5b7fc7), 'the baseline is drawn in the floor colour');
});

test("the event rows benchmark's costs share one scale: each bar is as long as its figure", async () => {
  /** @type {[string, string, string, number][]} name, label, group, µs per Event */
  const costs = [
    ['event', 'Event row', 'floor', 11],
    ['event-message', '+ outbox message', 'rows', 16.5],
    ['event-message-claim', '+ dedup claim (as stored)', 'rows', 28.4],
    ['relay', 'relay: read + delete', 'rows', 5.5],
  ];
  const data = eventRowsChart({
    startedAt: '2026-01-01T00:00:00.000Z',
    cores: 2,
    connections: 4,
    seconds: 10,
    measurements: costs.map(([name, label, group, value], i) => ({
      name,
      label,
      group,
      primary: { value, unit: 'µs/Event', ...(i > 0 && { floor: 11, floorShare: 1 }) },
      p50: 4,
      p99: 12,
    })),
  });
  const svg = chartSvg(data);
  for (const m of data.measurements) assert.ok(svg.includes(`>${m.label}<`), m.label);
  // The first panel's bars: 18 px high, in a colour other than the grid's.
  const bars = [
    ...svg.matchAll(/<rect x="\d+" y="\d+" width="([\d.]+)" height="18" fill="([^"]+)"/g),
  ]
    .filter(([, , fill]) => fill !== '#e3e6ea')
    .map(([, width]) => Number(width));
  assert.equal(bars.length, costs.length);
  costs.forEach(([, , , value], i) => {
    const expected = (bars[2] * value) / 28.4;
    assert.ok(Math.abs(bars[i] - expected) < 0.2, `${bars[i]} px for ${value} µs`);
  });
  const { width, height } = await renderPng(svg);
  assert.deepEqual({ width, height }, chartSize(costs.length));
});

test("the Kafka publish benchmark adds event-rows' figures to publishing and weighs them against the budgets", async () => {
  /** @type {[string, number][]} name, µs per Event */
  const costs = [
    ['event', 12],
    ['event-message', 18],
    ['event-message-claim', 31],
    ['relay', 5],
  ];
  const eventRows = {
    measurements: costs.map(([name, value]) => ({ name, primary: { value, unit: 'µs/Event' } })),
  };
  const publish = {
    startedAt: '2026-01-01T00:00:00.000Z',
    cores: 2,
    seconds: 6,
    batch: 1000,
    partitions: 12,
    messagesPerSecond: 40_000,
    producerUsPerMessage: 20,
    brokerUsPerMessage: 10,
    latency: { p50: 25, p99: 50 },
  };
  const c = ceiling(publish, eventRows);
  const sums = Object.fromEntries(c.sums.map((sum) => [sum.name, sum]));
  // Any design: the Event row, the producer and the broker. This one: its other rows too.
  assert.equal(sums.least.us, 12 + 20 + 10);
  assert.equal(sums.design.us, 31 + 5 + 20 + 10);
  assert.ok(Math.abs(sums.least.eventsPerSecond - 2e6 / 42) < 1e-6);
  assert.deepEqual(
    c.budgets.map((b) => b.usPerEvent),
    [50, 40],
  );
  assert.ok(Math.abs(sums.design.coresNeeded[0] - (66 * 40_000) / 1e6) < 1e-9);
  // Without event-rows, publishing alone.
  assert.deepEqual(
    ceiling(publish, undefined).sums.map((sum) => [sum.name, sum.us]),
    [['publish', 30]],
  );

  const data = kafkaPublishChart({ ...publish, ceiling: c });
  const svg = chartSvg(data);
  for (const m of data.measurements) assert.ok(svg.includes(`>${m.label}<`), m.label);
  // One scale: each bar as long as its figure, against the widest (this design's sum, 66 µs).
  const bars = [
    ...svg.matchAll(/<rect x="\d+" y="\d+" width="([\d.]+)" height="18" fill="([^"]+)"/g),
  ].filter(([, , fill]) => fill !== '#e3e6ea');
  const values = data.measurements.map((m) => m.primary.value);
  assert.deepEqual(values, [50, 40, 12, 24, 20, 10, 42, 66]);
  const widest = Number(bars[values.indexOf(66)][1]);
  values.forEach((value, i) => {
    assert.ok(Math.abs(Number(bars[i][1]) - (widest * value) / 66) < 0.2, `${value} µs`);
  });
  // The budgets in the floor colour; a sum over the tightest budget (40 µs) fails.
  assert.deepEqual(
    bars.map(([, , fill]) => fill),
    ['#5b7fc7', '#5b7fc7', '#8c96a3', '#8c96a3', '#8c96a3', '#8c96a3', '#d03b3b', '#d03b3b'],
  );
  const cheap = ceiling({ ...publish, producerUsPerMessage: 5, brokerUsPerMessage: 5 }, eventRows);
  const cheapSums = kafkaPublishChart({ ...publish, ceiling: cheap }).measurements.slice(-2);
  assert.deepEqual(
    cheapSums.map((m) => m.pass),
    [true, false],
  );
  const { width, height, pixels } = await renderPng(svg);
  assert.deepEqual({ width, height }, chartSize(values.length));
  assert.ok(coloursOf(pixels).has(0xd03b3b), 'a sum over budget is drawn in the fail colour');
});
