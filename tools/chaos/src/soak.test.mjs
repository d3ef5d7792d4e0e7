// The soak's arithmetic and its picture, without a stack.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderPng } from '@herald/observability/chart.mjs';
import { growthVerdict, heapUsedMiB, slope, soakSvg, toCsv } from './soak.mjs';

const series = (f, n = 60) => Array.from({ length: n }, (_, i) => ({ t: i * 10, value: f(i) }));

test('slope fits a line', () => {
  assert.equal(slope([0, 1, 2, 3], [1, 3, 5, 7]), 2);
  assert.equal(slope([0, 1, 2], [4, 4, 4]), 0);
  assert.equal(slope([5], [1]), 0);
});

test('a flat or noisy series passes; one that keeps growing fails', () => {
  assert.equal(
    growthVerdict(
      'rss',
      series(() => 150),
    ).ok,
    true,
  );
  assert.equal(
    growthVerdict(
      'rss',
      series((i) => 150 + (i % 2 ? 10 : -10)),
    ).ok,
    true,
  );
  // Warm-up growth in the first third does not count.
  assert.equal(
    growthVerdict(
      'rss',
      series((i) => (i < 20 ? 100 + i * 3 : 160)),
    ).ok,
    true,
  );
  const leak = growthVerdict(
    'rss',
    series((i) => 150 + i * 2),
  );
  assert.equal(leak.ok, false);
  assert.ok(leak.growth > leak.allowed);
  assert.equal(
    growthVerdict(
      'outbox',
      series((i) => i * 40),
    ).ok,
    false,
  );
  assert.equal(
    growthVerdict(
      'outbox',
      series((i) => (i % 3) * 100),
    ).ok,
    true,
  );
});

test('the CSV has one column per series and one row per sample', () => {
  const csv = toCsv(
    [
      { t: 0, values: { 'rss:events': 100, 'fds:events': 30 } },
      { t: 10, values: { 'rss:events': 101 } },
    ],
    ['fds:events', 'rss:events'],
  );
  assert.equal(csv, 't_seconds,fds:events,rss:events\n0,30,100\n10,,101\n');
});

test('the picture draws each series, a growing one in red', async () => {
  const flat = series(() => 150);
  const growing = series((i) => 150 + i * 2);
  const svg = soakSvg({
    title: 'Soak',
    subtitle: 'test',
    series: [
      { name: 'rss:events', points: flat, verdict: growthVerdict('rss', flat) },
      { name: 'rss:contacts', points: growing, verdict: growthVerdict('rss', growing) },
    ],
  });
  const { png, width, height, pixels } = await renderPng(svg);
  assert.ok(png.length > 5_000);
  assert.ok(width > 1000 && height > 200);
  let red = 0;
  let green = 0;
  for (let i = 0; i < pixels.length; i += 4) {
    const [r, g, b] = [pixels[i], pixels[i + 1], pixels[i + 2]];
    if (r > 180 && g < 90 && b < 90) red += 1;
    if (g > 130 && r < 80 && b < 110) green += 1;
  }
  assert.ok(red > 100, `red pixels: ${red}`);
  assert.ok(green > 100, `green pixels: ${green}`);
});

test('the heap is the sum of v8js_memory_heap_used over its spaces', () => {
  const exposition = [
    '# HELP v8js_memory_heap_used Heap Memory size allocated.',
    '# TYPE v8js_memory_heap_used gauge',
    'v8js_memory_heap_used{v8js_heap_space_name="new_space",otel_scope_name="x"} 1048576',
    'v8js_memory_heap_used{v8js_heap_space_name="old_space",otel_scope_name="x"} 3145728',
    'v8js_memory_heap_used_other 99',
    'v8js_memory_heap_space_size{v8js_heap_space_name="old_space"} 8388608',
  ].join('\n');
  assert.equal(heapUsedMiB(exposition), 4);
  assert.equal(heapUsedMiB('http_server_request_duration_count 3'), null);
});
