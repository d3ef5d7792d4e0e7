// The events benchmark's results as a picture: an SVG built as text, turned into a PNG by resvg
// (@resvg/resvg-js ships its renderer inside its npm package: nothing is fetched at run time).
// Two panels, one row per measurement: throughput against its target and its floor, then p99.

const WIDTH = 1200;
const ROW = 30;
const TOP = 78; // title and subtitle
const PANEL_HEAD = 34;
const GAP = 26;
const LEGEND = 54;
const LABEL_RIGHT = 300; // labels end here
const BAR_LEFT = 312;
const BAR_RIGHT = 900;
const FONT = 'DejaVu Sans, Verdana, Arial, sans-serif';
const COLORS = {
  pass: '#2e9e4f',
  fail: '#d03b3b',
  none: '#8c96a3',
  floor: '#5b7fc7',
  target: '#222222',
  grid: '#e3e6ea',
  text: '#1d232b',
  muted: '#5d6773',
};

/** Width and height of the chart of `rows` measurements, in pixels. */
export function chartSize(rows) {
  return { width: WIDTH, height: TOP + 2 * (PANEL_HEAD + rows * ROW) + GAP + LEGEND };
}

const escapeXml = (s) =>
  String(s).replace(
    /[<>&"']/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c],
  );

const finite = (n) => typeof n === 'number' && Number.isFinite(n);

/** 12345.6 -> "12,346"; 3.14159 -> "3.14"; small numbers keep two significant decimals. */
export function formatNumber(n) {
  if (!finite(n)) return 'n/a';
  if (Math.abs(n) >= 100) return Math.round(n).toLocaleString('en-US');
  if (Math.abs(n) >= 10) return n.toFixed(1);
  return n.toFixed(2);
}

/**
 * @param {number} x
 * @param {number} y
 * @param {unknown} content
 * @param {{ size?: number, anchor?: string, weight?: string, fill?: string }} [style]
 */
function text(x, y, content, { size = 13, anchor = 'start', weight, fill = COLORS.text } = {}) {
  const w = weight ? ` font-weight="${weight}"` : '';
  return `<text x="${x}" y="${y}" font-size="${size}" text-anchor="${anchor}" fill="${fill}"${w}>${escapeXml(content)}</text>`;
}

/** What one row shows; `m` is one entry of the results' `measurements`. */
function rowColor(m) {
  if (m.group === 'floor') return COLORS.floor;
  if (m.pass === true) return COLORS.pass;
  if (m.pass === false) return COLORS.fail;
  return COLORS.none;
}

/** Where the floor's share asked for lies (0.2 of the 1-row floor for single Events). */
const floorMarkOf = ({ floor, floorShare }) =>
  finite(floor) && finite(floorShare) ? floor * floorShare : NaN;

/** The largest figure a row's bar must hold: its value, target and floor mark. */
const rowMax = (m) =>
  Math.max(...[m.primary.value, m.primary.target, floorMarkOf(m.primary)].filter(finite), 1e-9);

function throughputPanel(measurements, top, panel = {}) {
  const out = [
    text(
      16,
      top + 22,
      panel.title ?? 'Throughput: each bar on its own scale (the largest of value and targets)',
      { size: 15, weight: 'bold' },
    ),
  ];
  // One scale for every bar when the figures compare with each other (costs of one thing).
  const shared = panel.sharedScale ? Math.max(...measurements.map(rowMax)) : null;
  measurements.forEach((m, i) => {
    const y = top + PANEL_HEAD + i * ROW;
    const { value, target, floor, unit } = m.primary;
    const floorMark = floorMarkOf(m.primary);
    const max = (shared ?? rowMax(m)) * 1.08;
    const x = (v) => BAR_LEFT + ((BAR_RIGHT - BAR_LEFT) * Math.max(0, v)) / max;
    out.push(text(LABEL_RIGHT, y + 17, m.label, { anchor: 'end' }));
    out.push(
      `<rect x="${BAR_LEFT}" y="${y + 4}" width="${BAR_RIGHT - BAR_LEFT}" height="18" fill="${COLORS.grid}"/>`,
    );
    if (finite(value)) {
      out.push(
        `<rect x="${BAR_LEFT}" y="${y + 4}" width="${(x(value) - BAR_LEFT).toFixed(1)}" height="18" fill="${rowColor(m)}"/>`,
      );
    }
    if (finite(floorMark)) {
      const fx = x(floorMark).toFixed(1);
      out.push(
        `<line x1="${fx}" y1="${y}" x2="${fx}" y2="${y + 26}" stroke="${COLORS.floor}" stroke-width="3" stroke-dasharray="4 2"/>`,
      );
    }
    if (finite(target)) {
      out.push(
        `<line x1="${x(target).toFixed(1)}" y1="${y}" x2="${x(target).toFixed(1)}" y2="${y + 26}" stroke="${COLORS.target}" stroke-width="3"/>`,
      );
    }
    let note = `${formatNumber(value)} ${unit}`;
    if (finite(target)) note += ` (≥ ${formatNumber(target)})`;
    if (finite(floorMark)) note += `, floor ${formatNumber(floor)}`;
    if (m.failed > 0) note += ` (${m.failed} failed)`;
    out.push(
      text(BAR_RIGHT + 8, y + 17, note, {
        size: 12,
        fill: m.failed > 0 ? COLORS.fail : COLORS.text,
        weight: m.failed > 0 ? 'bold' : undefined,
      }),
    );
  });
  return out;
}

function latencyPanel(measurements, top) {
  const p99s = measurements.map((m) => m.p99).filter(finite);
  const targets = measurements.map((m) => m.p99Target).filter(finite);
  // Log scale from 0.1 ms: a floor at 0.3 ms and a 1,000-Event array at 900 ms both read.
  const lo = Math.log10(0.1);
  const hi = Math.log10(Math.max(1000, ...p99s, ...targets) * 1.2);
  const x = (ms) =>
    BAR_LEFT + ((BAR_RIGHT - BAR_LEFT) * (Math.log10(Math.max(ms, 0.1)) - lo)) / (hi - lo);
  const out = [text(16, top + 22, 'p99 latency, ms (log scale)', { size: 15, weight: 'bold' })];
  const bottom = top + PANEL_HEAD + measurements.length * ROW;
  for (let decade = 0.1; decade <= 10 ** hi; decade *= 10) {
    const gx = x(decade).toFixed(1);
    out.push(
      `<line x1="${gx}" y1="${top + PANEL_HEAD - 4}" x2="${gx}" y2="${bottom}" stroke="${COLORS.grid}" stroke-width="1"/>`,
    );
    out.push(
      text(Number(gx), top + PANEL_HEAD - 6, formatNumber(decade), {
        size: 10,
        anchor: 'middle',
        fill: COLORS.muted,
      }),
    );
  }
  measurements.forEach((m, i) => {
    const y = top + PANEL_HEAD + i * ROW;
    out.push(text(LABEL_RIGHT, y + 17, m.label, { anchor: 'end' }));
    if (finite(m.p99)) {
      const over = finite(m.p99Target) && m.p99 > m.p99Target;
      const fill =
        m.group === 'floor'
          ? COLORS.floor
          : over
            ? COLORS.fail
            : finite(m.p99Target)
              ? COLORS.pass
              : COLORS.none;
      out.push(
        `<rect x="${BAR_LEFT}" y="${y + 6}" width="${(x(m.p99) - BAR_LEFT).toFixed(1)}" height="14" fill="${fill}"/>`,
      );
    }
    if (finite(m.p99Target)) {
      const tx = x(m.p99Target).toFixed(1);
      out.push(
        `<line x1="${tx}" y1="${y + 2}" x2="${tx}" y2="${y + 24}" stroke="${COLORS.target}" stroke-width="3"/>`,
      );
    }
    let note = `p99 ${formatNumber(m.p99)} ms`;
    if (finite(m.p99Target)) note += ` (≤ ${formatNumber(m.p99Target)})`;
    if (finite(m.p50)) note += `, p50 ${formatNumber(m.p50)}`;
    out.push(text(BAR_RIGHT + 8, y + 17, note, { size: 12 }));
  });
  return out;
}

function legend(
  top,
  { floor = 'floor (bare INSERT)', floorShare = "the floor's share asked for" } = {},
) {
  const items = [
    ['rect', COLORS.pass, 'meets its targets'],
    ['rect', COLORS.fail, 'misses a target'],
    ['rect', COLORS.none, 'no target for this figure'],
    ['rect', COLORS.floor, floor],
    ['line', COLORS.target, 'target'],
    ['dash', COLORS.floor, floorShare],
  ];
  const out = [];
  let x = 16;
  for (const [shape, color, label] of items) {
    if (shape === 'rect') {
      out.push(`<rect x="${x}" y="${top + 8}" width="16" height="14" fill="${color}"/>`);
    } else {
      const dash = shape === 'dash' ? ' stroke-dasharray="4 2"' : '';
      out.push(
        `<line x1="${x + 8}" y1="${top + 4}" x2="${x + 8}" y2="${top + 26}" stroke="${color}" stroke-width="3"${dash}/>`,
      );
    }
    out.push(text(x + 22, top + 20, label, { size: 12 }));
    x += 40 + label.length * 7;
  }
  return out;
}

/**
 * The SVG text of a results object: `{title, subtitle, measurements: [{name, label, group,
 * primary: {unit, value, target, floor, floorShare}, p50, p99, p99Target, pass, failed}]}`:
 * `floor` is the matching floor's figure and `floorShare` the share of it the targets ask for;
 * `legend: {floor, floorShare}` names those two marks when the floor is not a bare INSERT;
 * `primaryPanel: {title, sharedScale}` heads the first panel and puts its bars on one scale.
 */
export function chartSvg(results) {
  const ms = results.measurements;
  const { width, height } = chartSize(ms.length);
  const latencyTop = TOP + PANEL_HEAD + ms.length * ROW + GAP;
  const body = [
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
    text(16, 30, results.title, { size: 20, weight: 'bold' }),
    text(16, 54, results.subtitle ?? '', { size: 12, fill: COLORS.muted }),
    ...throughputPanel(ms, TOP, results.primaryPanel),
    ...latencyPanel(ms, latencyTop),
    ...legend(height - LEGEND + 8, results.legend),
  ];
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${FONT}">`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

/** The PNG of an SVG text, and its pixels (RGBA) for checks. */
export async function renderPng(svg) {
  const { Resvg } = await import('@resvg/resvg-js');
  const resvg = new Resvg(svg, {
    background: '#ffffff',
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' },
  });
  const image = resvg.render();
  return { png: image.asPng(), width: image.width, height: image.height, pixels: image.pixels };
}
