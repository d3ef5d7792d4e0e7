// Markdown as Prettier prints it, for the generated docs: padded tables, GitHub's heading
// anchors, sentences and lists of the parts that are there.

/** A table as Prettier prints it: every column padded to its widest cell. */
export function table(head, rows) {
  const cells = [head, ...rows].map((row) => row.map((c) => escapeCell(String(c))));
  const widths = head.map((_, i) => Math.max(3, ...cells.map((row) => width(row[i]))));
  const line = (row) =>
    `| ${row.map((c, i) => c + ' '.repeat(widths[i] - width(c))).join(' | ')} |`;
  return [
    line(cells[0]),
    `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`,
    ...cells.slice(1).map(line),
  ].join('\n');
}

function escapeCell(text) {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** Display width: what Prettier pads by (every character here is one column wide). */
function width(text) {
  return [...text].length;
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
export function slug(text) {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

export function sentence(text) {
  const t = text.trim();
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

export function join(parts, separator = '; ', prefix = '') {
  const kept = parts.filter((p) => p !== undefined && p !== null && p !== '');
  return kept.length ? `${prefix}${kept.join(separator)}` : '';
}
