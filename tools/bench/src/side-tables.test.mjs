// The side-tables benchmark's figures and chart from fixed samples: the sample point, the growth
// verdict, the longest transaction holding the horizon, and a PNG with real content.
import assert from 'node:assert/strict';
import test from 'node:test';
import { renderPng } from '@herald/observability/chart.mjs';
import { sideTablesSvg } from './side-tables-chart.mjs';
import { oldestHorizon, sampleAt, summarize } from './side-tables-sampler.mjs';

const MiB = 2 ** 20;

/** A table sample of `mib` MiB with `dead` dead rows and `vacuums` so far. */
const table = (mib, dead, vacuums) => ({
  bytes: mib * MiB,
  heapBytes: mib * MiB * 0.8,
  indexBytes: mib * MiB * 0.2,
  live: 1000,
  dead,
  vacuums,
});

/** Samples every 30 s: the outbox flat at 20 MiB, the claims growing 10 MiB a sample. */
const samples = Array.from({ length: 13 }, (_, i) => ({
  t: i * 30,
  tables: {
    'events.outbox': table(i === 0 ? 0 : 20, 15_000, 10 + i),
    'events.dedup_claims': table(i * 10, 40_000, 5 + i),
  },
  horizon:
    i === 4
      ? {
          database: 'other',
          application: 'loader',
          state: 'active',
          transactionSeconds: 90,
          query: 'insert',
        }
      : null,
}));

test('the sample point is the first sample at or after it, else the last', () => {
  assert.equal(sampleAt(samples, 60).t, 60);
  assert.equal(sampleAt(samples, 75).t, 90);
  assert.equal(sampleAt(samples, 10_000).t, 360);
});

test('a table that stays flat after the sample point is bounded, one that keeps growing is not', () => {
  const [outbox, claims] = summarize(samples, 60);
  assert.equal(outbox.series, 'events.outbox');
  assert.equal(outbox.atSampleMiB, 20);
  assert.equal(outbox.endMiB, 20);
  assert.equal(outbox.ratio, 1);
  assert.equal(outbox.bounded, true);
  assert.equal(outbox.vacuums, 12);
  assert.equal(outbox.maxDead, 15_000);

  assert.equal(claims.atSampleMiB, 20);
  assert.equal(claims.endMiB, 120);
  assert.equal(claims.grewMiB, 100);
  assert.equal(claims.bounded, false);
});

test('the longest transaction holding the horizon is reported with the time it was seen', () => {
  assert.deepEqual(oldestHorizon(samples), {
    database: 'other',
    application: 'loader',
    state: 'active',
    transactionSeconds: 90,
    query: 'insert',
    t: 120,
  });
  assert.equal(oldestHorizon(samples.map((s) => ({ ...s, horizon: null }))), null);
});

test('the chart names every table and renders to a PNG with more than one colour', async () => {
  const svg = sideTablesSvg({
    title: 'Herald side tables',
    subtitle: 'fixed figures for the chart test',
    sampleAtSeconds: 60,
    durationSeconds: 360,
    samples,
  });
  assert.match(svg, /events\.outbox/);
  assert.match(svg, /events\.dedup_claims/);
  const { width, height, pixels } = await renderPng(svg);
  assert.equal(width, 1200);
  assert.ok(height > 500);
  const colours = new Set();
  for (let i = 0; i < pixels.length; i += 4) {
    colours.add((pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2]);
  }
  assert.ok(colours.size > 10);
});
