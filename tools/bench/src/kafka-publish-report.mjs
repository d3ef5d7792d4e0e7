// kafka-publish's figures per candidate: each one's summary from its rounds, its CPU against
// the relay's producer as it is, and the tables and chart rows that show them.
import { fmt, stats } from './lib.mjs';

/** The candidate every other is compared with: the relay's producer as it is. */
export const BASELINE = 'relay';

/**
 * What the results hold of one candidate; the figures only when it was measured.
 * @typedef {object} CandidateResult
 * @property {string} name
 * @property {string} label
 * @property {string} version
 * @property {boolean} installed
 * @property {string} [reason] why it was not installed or not measured
 * @property {number | null} [installSeconds] this run's install time (null: installed before)
 * @property {string} [settings]
 * @property {number} [messagesPerSend]
 * @property {number} [inFlight]
 * @property {{ settings: string, messagesPerSecond: number, producerUsPerMessage: number, brokerUsPerMessage: number }[]} [tried]
 * @property {{ probed: number, asJava: number, firstMismatch?: object }} [partitioning]
 * @property {object[]} [rounds]
 * @property {number} [messagesPerSecond]
 * @property {number} [producerUsPerMessage]
 * @property {number} [brokerUsPerMessage]
 * @property {import('./lib.mjs').Stats} [latency] ms per send call
 * @property {number} [cpuUsPerMessage] producer and broker together
 * @property {number} [cpuRatio] cpuUsPerMessage against the baseline's
 */

/**
 * One measured candidate's figures over its rounds.
 * @param {Omit<CandidateResult, 'installed'>} base
 * @param {import('./kafka-publish-measure.mjs').Measured[]} rounds its own rounds, in order
 * @returns {CandidateResult}
 */
export function measuredResult(base, rounds) {
  const mean = (
    /** @type {'messagesPerSecond' | 'producerUsPerMessage' | 'brokerUsPerMessage'} */ f,
  ) => rounds.reduce((sum, r) => sum + r[f], 0) / rounds.length;
  return {
    ...base,
    installed: true,
    rounds: rounds.map(({ latencies, ...r }, i) => ({ round: i + 1, ...r, ...stats(latencies) })),
    messagesPerSecond: mean('messagesPerSecond'),
    producerUsPerMessage: mean('producerUsPerMessage'),
    brokerUsPerMessage: mean('brokerUsPerMessage'),
    latency: stats(rounds.flatMap((r) => r.latencies)),
  };
}

/**
 * The candidates with their producer and broker CPU per message and its ratio to the
 * baseline's (NaN for every one when the baseline has no figures).
 * @param {CandidateResult[]} results
 * @returns {CandidateResult[]}
 */
export function withRatios(results) {
  const cpuOf = (/** @type {CandidateResult} */ r) =>
    (r.producerUsPerMessage ?? NaN) + (r.brokerUsPerMessage ?? NaN);
  const baseline = cpuOf(results.find((r) => r.name === BASELINE) ?? /** @type {any} */ ({}));
  return results.map((r) => ({ ...r, cpuUsPerMessage: cpuOf(r), cpuRatio: cpuOf(r) / baseline }));
}

/**
 * "1,000 × 2": messages per send call and calls in flight.
 * @param {CandidateResult} r
 */
const callsText = (r) => `${(r.messagesPerSend ?? NaN).toLocaleString('en-US')} × ${r.inFlight}`;

/**
 * One row per candidate; one not measured says so.
 * @param {CandidateResult[]} results with ratios
 */
export function candidateTable(results) {
  const head =
    '| candidate | messages per call × calls in flight | producer CPU µs per message | broker CPU µs per message | messages/s | p50 ms per call | p99 ms per call | CPU vs the relay today |\n' +
    '|---|---:|---:|---:|---:|---:|---:|---:|';
  const rows = results.map((r) => {
    const name = `${r.label} ${r.version}`;
    if (r.messagesPerSecond === undefined) {
      return `| ${name} | ${r.installed ? 'not measured' : 'not installed'} | n/a | n/a | n/a | n/a | n/a | n/a |`;
    }
    return (
      `| ${name} | ${callsText(r)} | ${fmt(r.producerUsPerMessage)} | ${fmt(r.brokerUsPerMessage)} | ` +
      `${fmt(r.messagesPerSecond, 0)} | ${fmt(r.latency.p50)} | ${fmt(r.latency.p99)} | ${fmt(r.cpuRatio, 2)}× |`
    );
  });
  return [head, ...rows].join('\n');
}

/**
 * Every round of every candidate, in the order they ran.
 * @param {(import('./kafka-publish-measure.mjs').Measured & { round: number })[]} rounds
 * @param {Record<string, string>} labels each candidate's, by name
 */
export function roundsTable(rounds, labels) {
  return (
    '| round | candidate | messages/s | p50 ms per call | p99 ms per call | producer CPU µs per message | broker CPU µs per message |\n' +
    '|---:|---|---:|---:|---:|---:|---:|\n' +
    rounds
      .map((r) => {
        const { p50, p99 } = stats(r.latencies);
        return `| ${r.round} | ${labels[r.name] ?? r.name} | ${fmt(r.messagesPerSecond, 0)} | ${fmt(p50)} | ${fmt(p99)} | ${fmt(r.producerUsPerMessage)} | ${fmt(r.brokerUsPerMessage)} |`;
      })
      .join('\n')
  );
}

/**
 * What each candidate measured besides the table: the variants tried and the one kept, and
 * whether keys landed where the Java client puts them.
 * @param {CandidateResult[]} results
 */
export function candidateNotes(results) {
  return results.map((r) => {
    if (r.messagesPerSecond === undefined) return `${r.label}: ${r.reason}`;
    const tried = (r.tried ?? [])
      .map((t) => `${t.settings}: ${fmt(t.producerUsPerMessage + t.brokerUsPerMessage)} µs`)
      .join('; ');
    const p = r.partitioning;
    const keys = !p
      ? 'partitioning not checked'
      : p.asJava === p.probed
        ? `${p.asJava}/${p.probed} keys in the Java client's partition`
        : `${p.asJava}/${p.probed} keys in the Java client's partition: it partitions differently`;
    return `${r.label}: ${r.settings}${tried ? ` (cheapest of ${tried})` : ''}; ${keys}`;
  });
}

/**
 * Chart rows (chart.mjs) of the measured candidates: producer and broker CPU per message, on
 * the scale of the parts and budgets, and the latency of their calls.
 * @param {CandidateResult[]} results
 */
export function candidateChartRows(results) {
  return results
    .filter((r) => r.messagesPerSecond !== undefined)
    .map((r) => ({
      name: `candidate-${r.name}`,
      label: `${r.label}: producer + broker`,
      group: 'candidate',
      primary: { value: r.cpuUsPerMessage, unit: 'µs/Event' },
      p50: r.latency.p50,
      p99: r.latency.p99,
      p99Target: null,
      pass: null,
      failed: 0,
    }));
}
