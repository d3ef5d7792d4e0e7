// Draws the chart's Grafana dashboards (charts/herald/dashboards/*.json) from a Prometheus, as
// PNG pictures laid out by each panel's gridPos: a time series panel as lines over the last
// minutes, a stat panel as its current value. No Grafana is needed (none can be installed
// offline here); it is a look at the same queries on real data, not a pixel copy of Grafana.
//
//   node tools/observability/src/render-dashboards.mjs [--minutes N] [--out DIR]
//
// Prometheus is the local stack's (HERALD_PROMETHEUS_PORT, or HERALD_PROMETHEUS_URL); the
// pictures go to <data dir>/dashboards/<uid>.png unless --out says otherwise.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderPng } from './chart.mjs';
import { commandLine, positiveInteger } from '@herald/stack/args.mjs';
import { dataDir, prometheusUrl, repoRoot } from '@herald/stack/config.mjs';

const dashboardsDir = path.join(repoRoot, 'charts', 'herald', 'dashboards');
/** Grafana's grid: 24 columns; a height unit is 30 px. */
const COLUMN = 60;
const ROW = 30;
const TITLE = 56;
const COLORS = ['#7eb26d', '#eab839', '#6ed0e0', '#ef843c', '#e24d42', '#1f78c1', '#ba43a9'];
const TEXT = '#1d232b';
const MUTED = '#5d6773';

const escapeXml = (s) =>
  String(s).replace(
    /[<>&"]/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c],
  );

/** Every panel in grid order, those inside collapsed rows too. */
function allPanels(panels) {
  return panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);
}

/** What Grafana puts in place of each variable with "All" selected (see the dashboards test). */
function allValues(dashboard) {
  const values = new Map();
  for (const v of dashboard.templating?.list ?? []) {
    if (v.type === 'datasource') continue;
    if (v.allValue) values.set(v.name, v.allValue);
    else {
      const m = /^\/\^\(([^()]+)\)\$\/$/.exec(v.regex ?? '');
      if (m) values.set(v.name, `(${m[1]})`);
    }
  }
  return values;
}

export function substitute(expr, values, rateInterval = '1m') {
  return expr.replace(/\$(?:\{(\w+)(?::\w+)?\}|(\w+))/g, (whole, braced, bare) => {
    const name = braced ?? bare;
    if (name.startsWith('__')) return rateInterval;
    const value = values.get(name);
    if (value === undefined) throw new Error(`no value for ${whole}`);
    return value;
  });
}

/** A number as a panel's unit shows it, shortly. */
export function formatValue(value, unit) {
  if (!Number.isFinite(value)) return '–';
  const short = (n) => {
    const a = Math.abs(n);
    if (a >= 1e9) return `${(n / 1e9).toFixed(1)}G`;
    if (a >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
    if (a >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
    if (a >= 100 || a === 0) return n.toFixed(0);
    if (a >= 1) return n.toFixed(2);
    return n.toPrecision(2);
  };
  switch (unit) {
    case 'percentunit':
      return `${(value * 100).toFixed(value < 0.01 && value > 0 ? 2 : 1)}%`;
    case 'percent':
      return `${value.toFixed(1)}%`;
    case 's':
      return value < 1 ? `${short(value * 1000)} ms` : `${short(value)} s`;
    case 'ms':
      return `${short(value)} ms`;
    case 'bytes':
    case 'decbytes':
      return `${short(value / 2 ** 20)} MiB`;
    case 'reqps':
      return `${short(value)}/s`;
    default:
      return short(value);
  }
}

/**
 * One series of a Prometheus query's answer: `value` for an instant query, `values` for a range.
 * @typedef {object} PrometheusSeries
 * @property {Record<string, string>} metric its labels
 * @property {[number, string]} [value]
 * @property {[number, string][]} [values]
 */
/** @typedef {{ status: string, error?: string, data: { result: PrometheusSeries[] } }} PrometheusAnswer */

/**
 * @param {string} prometheus
 * @param {string} route
 * @param {Record<string, string>} params
 * @returns {Promise<PrometheusSeries[]>}
 */
async function prometheusApi(prometheus, route, params) {
  const url = `${prometheus}${route}?${new URLSearchParams(params)}`;
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  const answer = /** @type {PrometheusAnswer} */ (await response.json());
  if (answer.status !== 'success') throw new Error(`${route}: ${answer.error ?? 'failed'}`);
  return answer.data.result;
}

/** Each target's series over the window (time series) or now (stat). */
async function panelData(panel, values, { prometheus, start, end, step }) {
  const series = [];
  for (const target of panel.targets ?? []) {
    if (!target.expr) continue;
    const query = substitute(target.expr, values);
    if (panel.type === 'stat') {
      for (const r of await prometheusApi(prometheus, '/api/v1/query', { query, time: end })) {
        series.push({ labels: r.metric, points: [[Number(r.value[0]), Number(r.value[1])]] });
      }
    } else {
      const result = await prometheusApi(prometheus, '/api/v1/query_range', {
        query,
        start,
        end,
        step,
      });
      for (const r of result) {
        series.push({
          labels: r.metric,
          legend: target.legendFormat,
          points: r.values.map(([t, v]) => [Number(t), Number(v)]),
        });
      }
    }
  }
  return series;
}

function legendOf(s) {
  if (s.legend) {
    return s.legend.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, name) => s.labels[name] ?? '');
  }
  const labels = Object.entries(s.labels).filter(([k]) => k !== '__name__');
  return labels.length ? labels.map(([k, v]) => `${k}=${v}`).join(', ') : 'value';
}

function panelBox(panel) {
  const { x = 0, y = 0, w = 12, h = 8 } = panel.gridPos ?? {};
  return { x: x * COLUMN + 8, y: TITLE + y * ROW + 8, w: w * COLUMN - 8, h: h * ROW - 8 };
}

function timeseriesSvg(panel, box, series, { start, end, step }) {
  const unit = panel.fieldConfig?.defaults?.unit;
  const plot = { x: box.x + 54, y: box.y + 28, w: box.w - 64, h: box.h - 70 };
  const finite = series.flatMap((s) => s.points.map(([, v]) => v)).filter(Number.isFinite);
  const max = (Math.max(0, ...finite) || 1) * 1.1;
  const min = Math.min(0, ...finite);
  const xOf = (t) => plot.x + ((t - start) / Math.max(1, end - start)) * plot.w;
  const yOf = (v) => plot.y + plot.h - ((v - min) / (max - min)) * plot.h;
  const parts = [
    `<rect x="${plot.x}" y="${plot.y}" width="${plot.w}" height="${plot.h}" fill="none" stroke="#e3e6ea"/>`,
    `<text x="${plot.x - 4}" y="${plot.y + 8}" font-size="9" text-anchor="end" fill="${MUTED}">${escapeXml(formatValue(max / 1.1, unit))}</text>`,
    `<text x="${plot.x - 4}" y="${plot.y + plot.h}" font-size="9" text-anchor="end" fill="${MUTED}">${escapeXml(formatValue(min, unit))}</text>`,
  ];
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    // A series with no sample for a while (no traffic on a route) is drawn in pieces, as
    // Grafana does, not joined across the gap.
    const pieces = [];
    let previous = -Infinity;
    for (const [t, v] of s.points) {
      if (!Number.isFinite(v)) continue;
      if (t - previous > 2 * step) pieces.push([]);
      pieces.at(-1).push([xOf(t), yOf(v)]);
      previous = t;
    }
    for (const piece of pieces) {
      if (piece.length === 1) piece.push([piece[0][0] + 2, piece[0][1]]);
      const points = piece.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' ');
      parts.push(`<polyline points="${points}" fill="none" stroke="${color}" stroke-width="1.5"/>`);
    }
  });
  // The legend: as many series as fit on two lines, each cut to its column's width.
  const columns = box.w > 600 ? 3 : 2;
  const columnWidth = Math.floor((box.w - 20) / columns);
  const chars = Math.floor(columnWidth / 5.4) - 3;
  const shown = series.slice(0, 2 * columns);
  shown.forEach((s, i) => {
    const lx = box.x + 10 + (i % columns) * columnWidth;
    const ly = box.y + box.h - 24 + Math.floor(i / columns) * 12;
    const last = s.points.at(-1)?.[1];
    const value = formatValue(last, unit);
    const name = legendOf(s);
    const room = chars - value.length - 2;
    const text = `${name.length > room ? `${name.slice(0, Math.max(4, room - 1))}…` : name}: ${value}`;
    parts.push(
      `<rect x="${lx}" y="${ly - 7}" width="8" height="3" fill="${COLORS[i % COLORS.length]}"/>`,
      `<text x="${lx + 11}" y="${ly}" font-size="9" fill="${TEXT}">${escapeXml(text)}</text>`,
    );
  });
  if (series.length > shown.length) {
    parts.push(
      `<text x="${box.x + box.w - 8}" y="${box.y + 16}" font-size="9" text-anchor="end" fill="${MUTED}">${series.length} series</text>`,
    );
  }
  return parts;
}

function statSvg(panel, box, series) {
  const unit = panel.fieldConfig?.defaults?.unit;
  const values = series.map((s) => s.points[0][1]);
  const text =
    values.length === 0 ? 'No data' : values.map((v) => formatValue(v, unit)).join(' · ');
  return [
    `<text x="${box.x + box.w / 2}" y="${box.y + box.h / 2 + 14}" font-size="${values.length > 1 ? 18 : 28}" font-weight="bold" text-anchor="middle" fill="${values.length ? '#2e9e4f' : MUTED}">${escapeXml(text)}</text>`,
  ];
}

/**
 * One dashboard as an SVG, with what each panel found: `{svg, panels: [{title, type, series}]}`.
 * `minutes` of history for time series, ending now.
 */
export async function renderDashboard(dashboard, { prometheus, minutes = 10, now = Date.now() }) {
  const end = Math.floor(now / 1000);
  const start = end - minutes * 60;
  const step = Math.max(5, Math.round((minutes * 60) / 240));
  const values = allValues(dashboard);
  const panels = allPanels(dashboard.panels);
  const width = 24 * COLUMN + 8;
  const height =
    TITLE + Math.max(...panels.map((p) => ((p.gridPos?.y ?? 0) + (p.gridPos?.h ?? 8)) * ROW)) + 16;
  const parts = [
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#f4f5f5"/>`,
    `<text x="12" y="30" font-size="20" font-weight="bold" fill="${TEXT}">${escapeXml(dashboard.title)}</text>`,
    `<text x="12" y="47" font-size="11" fill="${MUTED}">${escapeXml(`last ${minutes} min to ${new Date(now).toISOString().slice(0, 19)}Z, every variable All; drawn from ${prometheus}`)}</text>`,
  ];
  const found = [];
  for (const panel of panels) {
    const box = panelBox(panel);
    if (panel.type === 'row') {
      parts.push(
        `<text x="${box.x}" y="${box.y + 18}" font-size="14" font-weight="bold" fill="${TEXT}">${escapeXml(panel.title)}</text>`,
      );
      continue;
    }
    const series = await panelData(panel, values, { prometheus, start, end, step });
    found.push({ title: panel.title, type: panel.type, series: series.length });
    parts.push(
      `<rect x="${box.x}" y="${box.y}" width="${box.w}" height="${box.h}" fill="#ffffff" stroke="#d8dce1"/>`,
      `<text x="${box.x + 8}" y="${box.y + 16}" font-size="11" font-weight="bold" fill="${TEXT}">${escapeXml(panel.title)}</text>`,
      ...(panel.type === 'stat'
        ? statSvg(panel, box, series)
        : timeseriesSvg(panel, box, series, { start, end, step })),
    );
  }
  const svg = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="DejaVu Sans, Verdana, Arial, sans-serif">`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
  return { svg, panels: found };
}

/** Every dashboard of the chart, drawn into `out` as <uid>.png; what each panel found. */
export async function renderDashboards({ prometheus, out, minutes }) {
  fs.mkdirSync(out, { recursive: true });
  const written = [];
  for (const file of fs
    .readdirSync(dashboardsDir)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const dashboard = JSON.parse(fs.readFileSync(path.join(dashboardsDir, file), 'utf8'));
    const { svg, panels } = await renderDashboard(dashboard, { prometheus, minutes });
    const { png, width, height } = await renderPng(svg);
    const target = path.join(out, `${dashboard.uid}.png`);
    fs.writeFileSync(target, png);
    written.push({ uid: dashboard.uid, file: target, width, height, panels });
  }
  return written;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = commandLine(
    `Usage: node tools/observability/src/render-dashboards.mjs [--minutes N] [--out DIR]

Draws each dashboard of charts/herald/dashboards from the local stack's Prometheus as a PNG.
  --minutes N   history shown by time series panels (default 10)
  --out DIR     where the pictures go (default <data dir>/dashboards)
  --json        print what was drawn (files, sizes, series per panel) as JSON`,
    {
      options: {
        minutes: { type: 'string' },
        out: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
      check: ({ values: v }) => v.minutes !== undefined && positiveInteger('minutes', v.minutes),
    },
  );
  const prometheus = process.env.HERALD_PROMETHEUS_URL || prometheusUrl;
  const written = await renderDashboards({
    prometheus,
    out: path.resolve(values.out ?? path.join(dataDir, 'dashboards')),
    minutes: values.minutes === undefined ? 10 : Number(values.minutes),
  });
  if (values.json) process.stdout.write(`${JSON.stringify(written)}\n`);
  else
    for (const w of written) {
      const empty = w.panels.filter((p) => p.series === 0).map((p) => p.title);
      console.log(
        `${path.relative(process.cwd(), w.file)}: ${w.panels.length} panels${empty.length ? `, no data in: ${empty.join(', ')}` : ''}`,
      );
    }
}
