// The side-tables benchmark as a picture (an SVG the observability package's renderPng turns
// into a PNG): two panels over the run's minutes, each table's size in MiB and its dead rows,
// one line per table, with the sample point marked.
import { formatNumber } from '@herald/observability/chart.mjs';

const WIDTH = 1200;
const PANEL_HEIGHT = 260;
const TOP = 78;
const GAP = 50;
const LEFT = 90;
const RIGHT = 1160;
const FONT = 'DejaVu Sans, Verdana, Arial, sans-serif';
const COLORS = ['#1f78c1', '#d03b3b', '#2e9e4f', '#eab839'];
const GRID = '#e3e6ea';
const TEXT = '#1d232b';
const MUTED = '#5d6773';

const escapeXml = (s) =>
  String(s).replace(
    /[<>&"]/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c],
  );

/**
 * @param {number} x
 * @param {number} y
 * @param {unknown} content
 * @param {{ size?: number, anchor?: string, weight?: string, fill?: string }} [style]
 */
function text(x, y, content, { size = 12, anchor = 'start', weight, fill = TEXT } = {}) {
  const w = weight ? ` font-weight="${weight}"` : '';
  return `<text x="${x}" y="${y}" font-size="${size}" text-anchor="${anchor}" fill="${fill}"${w}>${escapeXml(content)}</text>`;
}

/**
 * One panel: a line per series over time, the y axis from 0 to the largest value.
 * @param {{ title: string, top: number, unit: string, tMax: number, markAt: number,
 *   series: { name: string, points: [number, number][] }[] }} panel  points: [seconds, value]
 */
function panelSvg({ title, top, unit, tMax, markAt, series }) {
  const plotTop = top + 34;
  const plotHeight = PANEL_HEIGHT - 60;
  const values = series.flatMap((s) => s.points.map(([, v]) => v)).filter(Number.isFinite);
  const max = Math.max(1e-9, ...values) * 1.1;
  const tMin = Math.min(0, ...series.flatMap((s) => s.points.map(([t]) => t)));
  const x = (t) => LEFT + ((RIGHT - LEFT) * (t - tMin)) / Math.max(1, tMax - tMin);
  const y = (v) => plotTop + plotHeight - (plotHeight * v) / max;
  const out = [
    text(16, top + 20, title, { size: 15, weight: 'bold' }),
    `<rect x="${LEFT}" y="${plotTop}" width="${RIGHT - LEFT}" height="${plotHeight}" fill="none" stroke="${GRID}"/>`,
  ];
  for (let i = 0; i <= 4; i += 1) {
    const v = (max / 1.1) * (i / 4);
    out.push(
      `<line x1="${LEFT}" y1="${y(v).toFixed(1)}" x2="${RIGHT}" y2="${y(v).toFixed(1)}" stroke="${GRID}"/>`,
      text(LEFT - 6, y(v) + 4, `${formatNumber(v)} ${unit}`, {
        size: 10,
        anchor: 'end',
        fill: MUTED,
      }),
    );
  }
  for (let minute = 0; minute * 60 <= tMax; minute += Math.max(1, Math.ceil(tMax / 60 / 15))) {
    out.push(
      text(x(minute * 60), plotTop + plotHeight + 14, `${minute} min`, {
        size: 10,
        anchor: 'middle',
        fill: MUTED,
      }),
    );
  }
  const mx = x(markAt).toFixed(1);
  out.push(
    `<line x1="${mx}" y1="${plotTop}" x2="${mx}" y2="${plotTop + plotHeight}" stroke="${TEXT}" stroke-width="1.5" stroke-dasharray="5 3"/>`,
  );
  series.forEach((s, i) => {
    const points = s.points
      .filter(([, v]) => Number.isFinite(v))
      .map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`)
      .join(' ');
    out.push(
      `<polyline points="${points}" fill="none" stroke="${COLORS[i % COLORS.length]}" stroke-width="2"/>`,
    );
  });
  return out;
}

/**
 * The SVG text of the benchmark's results: `{title, subtitle, sampleAtSeconds, durationSeconds,
 * samples}` with samples as side-tables-sampler.mjs takes them.
 * @param {{ title: string, subtitle: string, sampleAtSeconds: number, durationSeconds: number,
 *   samples: import('./side-tables-sampler.mjs').Sample[] }} results
 */
export function sideTablesSvg({ title, subtitle, sampleAtSeconds, durationSeconds, samples }) {
  const names = [...new Set(samples.flatMap((s) => Object.keys(s.tables)))];
  /** @param {(t: import('./side-tables-sampler.mjs').TableSample) => number} pick */
  const seriesOf = (pick) =>
    names.map((name) => ({
      name,
      points: /** @type {[number, number][]} */ (
        samples.filter((s) => s.tables[name]).map((s) => [s.t, pick(s.tables[name])])
      ),
    }));
  const tMax = Math.max(durationSeconds, ...samples.map((s) => s.t));
  const legendTop = TOP + 2 * PANEL_HEIGHT + GAP + 10;
  const height = legendTop + 40;
  const body = [
    `<rect x="0" y="0" width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    text(16, 30, title, { size: 20, weight: 'bold' }),
    text(16, 54, subtitle, { size: 12, fill: MUTED }),
    ...panelSvg({
      title: 'Size: table, indexes and TOAST (pg_total_relation_size)',
      top: TOP,
      unit: 'MiB',
      tMax,
      markAt: sampleAtSeconds,
      series: seriesOf((t) => t.bytes / 2 ** 20),
    }),
    ...panelSvg({
      title: 'Dead rows not yet vacuumed (n_dead_tup)',
      top: TOP + PANEL_HEIGHT + GAP,
      unit: '',
      tMax,
      markAt: sampleAtSeconds,
      series: seriesOf((t) => t.dead),
    }),
  ];
  let lx = 16;
  names.forEach((name, i) => {
    body.push(
      `<rect x="${lx}" y="${legendTop + 8}" width="16" height="4" fill="${COLORS[i % COLORS.length]}"/>`,
      text(lx + 22, legendTop + 14, name),
    );
    lx += 40 + name.length * 7;
  });
  body.push(
    `<line x1="${lx + 8}" y1="${legendTop + 2}" x2="${lx + 8}" y2="${legendTop + 20}" stroke="${TEXT}" stroke-width="1.5" stroke-dasharray="5 3"/>`,
    text(lx + 16, legendTop + 14, 'the sample point'),
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="${FONT}">`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}
