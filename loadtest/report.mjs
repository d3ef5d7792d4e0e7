// A k6 run as pictures: k6's own HTML report (its web dashboard, exported to one file at the end
// of the run, no server) and a PNG of throughput and latency percentiles per second, drawn from
// k6's CSV output. Node built-ins plus the renderer the benchmark uses (@resvg/resvg-js).
import fs from 'node:fs';
import readline from 'node:readline';
import { renderPng } from '@herald/observability/chart.mjs';

/** The environment that makes k6 export its HTML report to `file` without opening a port. */
export function htmlReportEnv(file) {
  return {
    K6_WEB_DASHBOARD: 'true',
    K6_WEB_DASHBOARD_PORT: '-1',
    K6_WEB_DASHBOARD_PERIOD: '2s',
    K6_WEB_DASHBOARD_EXPORT: file,
  };
}

const percentile = (sorted, p) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

/**
 * Per second of the run, from k6's CSV output (`--out csv=FILE`): requests answered, and p50,
 * p95, p99 of `http_req_duration` in ms. `[{t (s from the start), requests, p50, p95, p99}]`.
 */
export async function timeSeries(csvFile) {
  const buckets = new Map();
  const lines = readline.createInterface({ input: fs.createReadStream(csvFile) });
  let columns;
  for await (const line of lines) {
    if (!columns) {
      columns = line.split(',');
      continue;
    }
    const cells = line.split(',');
    if (cells[columns.indexOf('metric_name')] !== 'http_req_duration') continue;
    const second = Math.floor(Number(cells[columns.indexOf('timestamp')]));
    const value = Number(cells[columns.indexOf('metric_value')]);
    if (!Number.isFinite(second) || !Number.isFinite(value)) continue;
    let bucket = buckets.get(second);
    if (!bucket) buckets.set(second, (bucket = []));
    bucket.push(value);
  }
  const seconds = [...buckets.keys()].sort((a, b) => a - b);
  const start = seconds[0] ?? 0;
  return seconds.map((second) => {
    const values = buckets.get(second).sort((a, b) => a - b);
    return {
      t: second - start,
      requests: values.length,
      p50: percentile(values, 0.5),
      p95: percentile(values, 0.95),
      p99: percentile(values, 0.99),
    };
  });
}

const WIDTH = 1100;
const PANEL = 240;
const LEFT = 70;
const RIGHT = 30;
const COLORS = { requests: '#5b7fc7', p50: '#2e9e4f', p95: '#d98c1f', p99: '#d03b3b' };

function panel(series, keys, top, title, unit) {
  const w = WIDTH - LEFT - RIGHT;
  const h = PANEL - 50;
  const tMax = Math.max(1, ...series.map((s) => s.t));
  const vMax = Math.max(1e-9, ...series.flatMap((s) => keys.map((k) => s[k]))) * 1.1;
  const x = (t) => (LEFT + (t / tMax) * w).toFixed(1);
  const y = (v) => (top + 30 + h - (v / vMax) * h).toFixed(1);
  const parts = [
    `<text x="${LEFT}" y="${top + 18}" font-size="14" font-weight="bold" fill="#1d232b">${title}</text>`,
    `<rect x="${LEFT}" y="${top + 30}" width="${w}" height="${h}" fill="none" stroke="#e3e6ea"/>`,
    `<text x="${LEFT - 8}" y="${top + 36}" font-size="11" text-anchor="end" fill="#5d6773">${Math.round(vMax / 1.1)} ${unit}</text>`,
    `<text x="${LEFT - 8}" y="${top + 30 + h}" font-size="11" text-anchor="end" fill="#5d6773">0</text>`,
    `<text x="${LEFT + w}" y="${top + 44 + h}" font-size="11" text-anchor="end" fill="#5d6773">${tMax} s</text>`,
  ];
  keys.forEach((key, i) => {
    const points = series.map((s) => `${x(s.t)},${y(s[key])}`).join(' ');
    parts.push(
      `<polyline points="${points}" fill="none" stroke="${COLORS[key]}" stroke-width="2"/>`,
      `<text x="${LEFT + w - 80 * (keys.length - i)}" y="${top + 18}" font-size="12" font-weight="bold" fill="${COLORS[key]}">${key}</text>`,
    );
  });
  return parts;
}

/** The SVG of a run's time series: throughput on top, latency percentiles below. */
export function reportSvg(series, title) {
  const height = 70 + 2 * PANEL;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="DejaVu Sans, Verdana, Arial, sans-serif">`,
    `<rect x="0" y="0" width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="16" y="32" font-size="20" font-weight="bold" fill="#1d232b">${title}</text>`,
    ...panel(series, ['requests'], 50, 'Requests answered per second', 'req/s'),
    ...panel(
      series,
      ['p50', 'p95', 'p99'],
      50 + PANEL,
      'Latency per second (http_req_duration)',
      'ms',
    ),
    '</svg>',
    '',
  ].join('\n');
}

/** Writes the PNG of k6's CSV output `csvFile` to `pngFile`; returns the series drawn. */
export async function writeTimeSeriesPng(csvFile, pngFile, title) {
  const series = await timeSeries(csvFile);
  const { png } = await renderPng(reportSvg(series, title));
  fs.writeFileSync(pngFile, png);
  return series;
}
