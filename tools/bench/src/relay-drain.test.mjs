// The relay drain benchmark: its summary holds each part to its cheapest round, and its chart
// draws every round, the producer alone in the floor colour.
import assert from 'node:assert/strict';
import test from 'node:test';
import { chartSize, chartSvg, renderPng } from '@herald/observability/chart.mjs';
import { chartData, summarize } from './relay-drain.mjs';

/** @param {number} round @param {'relay' | 'producer'} part @param {number} us */
const round = (round, part, us) => ({
  round,
  part,
  messages: 200_000,
  seconds: 4,
  perSecond: 50_000,
  usPerMessage: us,
  brokerUsPerMessage: 2,
});

test('summarize takes the cheapest round of each part and divides the relay by its producer', () => {
  const s = summarize([
    round(1, 'relay', 16),
    round(1, 'producer', 5),
    round(2, 'relay', 12),
    round(2, 'producer', 6),
  ]);
  assert.equal(s.relay?.usPerMessage, 12);
  assert.equal(s.producer?.usPerMessage, 5);
  assert.equal(s.relayOverProducer, 12 / 5);
});

test("the relay drain benchmark's rounds draw as a chart, the producer alone as the floor", async () => {
  const data = chartData(
    summarize([round(1, 'relay', 16), round(1, 'producer', 5), round(2, 'relay', 12)]),
  );
  const svg = chartSvg(data);
  for (const m of data.measurements) assert.ok(svg.includes(`>${m.label}<`), m.label);
  const { width, height, pixels } = await renderPng(svg);
  assert.deepEqual({ width, height }, chartSize(3));
  const colours = new Set();
  for (let i = 0; i < pixels.length; i += 4) {
    colours.add((pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2]);
  }
  assert.ok(colours.has(0x5b7fc7), 'the producer alone is drawn in the floor colour');
});
