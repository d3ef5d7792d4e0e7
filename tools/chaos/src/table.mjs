// The fault suite's report: one table line per fault with the details that explain a failure,
// and the run's result file.
import fs from 'node:fs';
import path from 'node:path';
import { dataDir } from '@herald/stack/index.mjs';
import { PUBLISH_DEADLINE_MS } from './oracle.mjs';

/** @typedef {import('./suite.mjs').Row} Row */

/** @param {number | null | undefined} ms */
const seconds = (ms) => (ms === undefined || ms === null ? '-' : `${(ms / 1000).toFixed(1)} s`);

/** @param {Record<string, number> | undefined} errors */
function errorsText(errors) {
  const entries = Object.entries(errors ?? {}).sort((a, b) => b[1] - a[1]);
  return entries.length === 0 ? 'none' : entries.map(([k, v]) => `${k}×${v}`).join(' ');
}

/**
 * One line per fault: what the load saw and what the oracle found.
 * @param {Row[]} rows
 */
export function formatTable(rows) {
  const head = [
    'FAULT',
    'REQUESTS',
    '202s',
    'EVENTS 202',
    'LOST',
    'DOUBLED',
    'KAFKA DUPS',
    'MAX PUBLISH LAG',
    'CLIENT ERRORS BY STATUS',
    'RECOVERY',
    'RESULT',
  ];
  const body = rows.map((r) => [
    r.fault,
    String(r.requests ?? '-'),
    String(r.answered202 ?? '-'),
    String(r.eventsAcked ?? '-'),
    String(r.verdict?.lost ?? '-'),
    String(r.verdict?.doubled ?? '-'),
    String(r.verdict?.kafkaDuplicates ?? '-'),
    r.verdict ? seconds(r.verdict.maxPublishLagMs) : '-',
    errorsText(r.clientErrors),
    seconds(r.recoveryMs),
    r.ok ? 'ok' : r.error ? 'ERROR' : 'FAIL',
  ]);
  const numeric = new Set([1, 2, 3, 4, 5, 6, 7, 9]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cols) =>
    cols
      .map((c, i) => (numeric.has(i) ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  const out = [line(head), ...body.map(line)];
  const details = rows.flatMap(faultDetails);
  return [...out, ...(details.length ? ['', ...details] : [])].join('\n');
}

/**
 * Writes the run to <data dir>/chaos/chaos-<time>.json; returns the path.
 * @param {object} result
 */
export function writeResults(result) {
  const dir = path.join(dataDir, 'chaos');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `chaos-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  return file;
}

/**
 * The lines under the table about one fault: its notes, what the oracle found wrong, the alerts.
 * @param {Row} r
 * @returns {string[]}
 */
function faultDetails(r) {
  const details = [];
  for (const note of r.notes ?? []) details.push(`  ${r.fault}: ${note}`);
  if (r.failOpen) {
    details.push(
      `  ${r.fault}: ${r.failOpen.servedWithoutBudgetDuringFault} answer(s) served without a budget (fail open) during the fault; ${r.failOpen.servedWithBudgetAfterRecovery} with one after recovery`,
    );
  }
  const v = r.verdict;
  if (v && v.maxPublishDelayMs > 10_000) {
    details.push(
      `  ${r.fault}: the slowest Event reached Kafka ${seconds(v.maxPublishDelayMs)} after it could (recorded, or recovery; limit ${seconds(PUBLISH_DEADLINE_MS)})`,
    );
  }
  const problems = v
    ? v.lost +
      v.doubled +
      v.rejectedPresent +
      v.duplicatesWithOtherId +
      v.badMessageIds +
      v.publishedNotStored +
      v.storedNotPublished
    : 0;
  if (problems > 0) {
    details.push(
      `  ${r.fault}: lost ${v.lost} (absent from PostgreSQL ${v.lostInPostgres}, never on Kafka ${v.unpublished}, on Kafka too late ${v.publishedLate}); doubled ${v.doubled}; refused yet present ${v.rejectedPresent}; duplicates with another id ${v.duplicatesWithOtherId}; on Kafka but not stored ${v.publishedNotStored}; stored but not on Kafka ${v.storedNotPublished}; examples ${JSON.stringify(v.examples)}`,
    );
  }
  if (r.error) details.push(`  ${r.fault}: ERROR ${r.error}`);
  if (r.collateral?.length) {
    details.push(`  ${r.fault}: FAILED: another component went down with it`);
  }
  for (const a of r.alerts ?? []) {
    const seen = a.state
      ? `${a.state} ${a.activeAfterS} s after the fault began, ` +
        (a.resolvedAfterS === null
          ? 'NOT resolved'
          : `resolved ${a.resolvedAfterS} s after the load stopped`)
      : 'NEVER raised';
    details.push(
      `  ${r.fault}: alert ${a.alert} ${seen}${a.quietBefore ? '' : ' (already active before)'}`,
    );
  }
  if (r.customerFailures) {
    details.push(
      `  ${r.fault}: FAILED: ${r.customerFailures} answer(s) were a 500 or no answer within the attempt timeout`,
    );
  }
  if (r.anomalies?.length) {
    details.push(`  ${r.fault}: unexpected answers: ${r.anomalies.slice(0, 5).join('; ')}`);
  }
  return details;
}
