// What the restore drill concludes from the load's ledger, the backup's bounds and the export of
// the restored Contact. The bounds are the drill's own clock around pg_basebackup: an Event
// answered 202 before pg_basebackup was started was committed before the backup's start point
// and must be restored; one answered while it ran, or after it had exited, may be there or not
// (its commit may come before or after the end point the restore replays to); none may be there
// twice.

/**
 * @typedef {'before' | 'during' | 'after'} Window
 *
 * @typedef {object} Verdict
 * @property {Record<Window, number>} answered  Events answered 202, by when the answer came
 * @property {Record<Window, number>} restored  of those, present once in the restore
 * @property {number} exported    Events in the export
 * @property {number} missing     answered before the backup started, absent from the restore
 * @property {number} doubled     dedupKeys present more than once
 * @property {number} renamed     present under an eventName other than the one sent
 * @property {number} unanswered  present though never answered 202 (sent, its answer lost or
 *   given up on: either is correct)
 * @property {string[]} examples  a few missing, doubled or renamed dedupKeys
 * @property {boolean} ok         nothing missing, doubled or renamed, and something to check
 */

/**
 * @param {number} at
 * @param {{ startedAt: number, endedAt: number }} backup
 * @returns {Window}
 */
export function windowOf(at, { startedAt, endedAt }) {
  if (at < startedAt) return 'before';
  return at <= endedAt ? 'during' : 'after';
}

/**
 * @param {{ acked: Map<string, number>, names: Map<string, string> }} sent  dedupKey -> when it
 *   was answered 202; dedupKey -> the eventName sent with it
 * @param {{ startedAt: number, endedAt: number }} backup
 * @param {{ dedupKey: string | null, eventName: string }[]} exported
 * @returns {Verdict}
 */
export function judge({ acked, names }, backup, exported) {
  /** @type {Map<string, number>} */
  const copies = new Map();
  const examples = new Set();
  let renamed = 0;
  let unanswered = 0;
  for (const { dedupKey, eventName } of exported) {
    const key = dedupKey ?? '(no dedupKey)';
    copies.set(key, (copies.get(key) ?? 0) + 1);
    if (!acked.has(key)) unanswered += 1;
    if (names.has(key) && names.get(key) !== eventName) {
      renamed += 1;
      examples.add(`${key} renamed ${eventName}`);
    }
  }
  let doubled = 0;
  for (const [key, n] of copies) {
    if (n < 2) continue;
    doubled += 1;
    examples.add(`${key} ×${n}`);
  }
  const answered = { before: 0, during: 0, after: 0 };
  const restored = { before: 0, during: 0, after: 0 };
  let missing = 0;
  for (const [key, at] of acked) {
    const window = windowOf(at, backup);
    answered[window] += 1;
    if (copies.get(key) === 1) restored[window] += 1;
    else if (!copies.has(key) && window === 'before') {
      missing += 1;
      examples.add(`${key} missing`);
    }
  }
  return {
    answered,
    restored,
    exported: exported.length,
    missing,
    doubled,
    renamed,
    unanswered,
    examples: [...examples].slice(0, 10),
    ok: missing === 0 && doubled === 0 && renamed === 0 && answered.before > 0,
  };
}

/**
 * The verdict as the drill prints it.
 * @param {Verdict} v
 */
export function formatVerdict(v) {
  const { answered: a, restored: r } = v;
  const lines = [
    `answered 202: ${a.before} before the backup started, ${a.during} while it ran, ${a.after} after it ended`,
    `restored:     ${r.before} of ${a.before} before, ${r.during} of ${a.during} during, ${r.after} of ${a.after} after (${v.exported} Events in the export, ${v.unanswered} of them never answered 202)`,
    `missing ${v.missing}, doubled ${v.doubled}, renamed ${v.renamed}`,
  ];
  if (v.examples.length > 0) lines.push(`examples: ${v.examples.join(', ')}`);
  if (a.before === 0) lines.push('nothing was answered before the backup started: nothing proved');
  lines.push(v.ok ? 'restore drill: PASS' : 'restore drill: FAIL');
  return lines.join('\n');
}
