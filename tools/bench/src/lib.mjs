// Small helpers shared by the benchmarks: percentiles, a closed-loop load generator, the
// figures of variants measured in alternating rounds, the machine's cores, and the value of an
// `event.recorded` message as the database benchmarks write and publish it.
import os from 'node:os';
import { performance } from 'node:perf_hooks';

/**
 * What main.mjs hands every benchmark's run().
 * @typedef {object} RunOptions
 * @property {string} ingressUrl
 * @property {string} adminToken
 * @property {string} repoRoot
 * @property {number} seconds length of each measurement
 * @property {number} warmup unmeasured seconds before a measurement
 * @property {number} connections
 * @property {number} concurrency the same number, as the request-loop benchmarks call it
 * @property {string[]} [only] the events measurements to run, when not all
 * @property {Record<string, unknown>} earlier the results of the benchmarks run before, by name
 * @property {number} [minutes] side-tables: minutes of load
 * @property {number} [sampleAt] side-tables: the minute the end is compared with
 * @property {number} [rate] side-tables: requests/s, instead of half the measured capacity
 * @property {boolean} [compact] side-tables: VACUUM FULL the tables before the load
 * @property {number} [rows] partitioning: Events in the table before it is partitioned
 * @property {number} [events] growth: Events in the loaded database
 */

/**
 * Latency figures of a set of samples, in ms.
 * @typedef {{ count: number, mean: number, p50: number, p99: number }} Stats
 */

/** The cores the benchmarks share (the budget every per-request CPU figure is read against). */
export const machineCores = () => os.availableParallelism?.() ?? os.cpus().length;

/** The properties of the database benchmarks' Events. */
export const EVENT_PROPERTIES = { plan: 'pro', amount: 42.5, path: '/checkout', items: ['a'] };

/**
 * The JSON value of an `event.recorded` message about a Contact, received when it occurred.
 * @param {{ id: string, tenantId: string, contactId: string, dedupKey: string, at: string }} event
 */
export function eventRecordedValue({ id, tenantId, contactId, dedupKey, at }) {
  return JSON.stringify({
    version: 1,
    type: 'event.recorded',
    messageId: id,
    tenantId,
    eventId: id,
    contactId,
    organizationExternalId: null,
    eventName: 'Bench Event',
    occurredAt: at,
    receivedAt: at,
    dedupKey,
    properties: EVENT_PROPERTIES,
  });
}

/**
 * The `p`th percentile of ascending samples (nearest rank), NaN when there are none.
 * @param {ArrayLike<number>} sortedMs
 * @param {number} p
 */
export function percentile(sortedMs, p) {
  if (sortedMs.length === 0) return NaN;
  const i = Math.min(sortedMs.length - 1, Math.ceil((p / 100) * sortedMs.length) - 1);
  return sortedMs[Math.max(0, i)];
}

/**
 * Count, mean, p50 and p99 of samples in ms.
 * @param {number[]} samplesMs
 * @returns {Stats}
 */
export function stats(samplesMs) {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const mean = sorted.reduce((s, x) => s + x, 0) / (sorted.length || 1);
  return { count: sorted.length, mean, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

/**
 * Runs `request()` from `concurrency` loops for `seconds` (after `warmupSeconds` not
 * counted); `request` resolves to true for an expected answer. Bounded in time by design.
 * @param {{ request: () => Promise<boolean>, concurrency: number, seconds: number,
 *   warmupSeconds?: number }} load
 * @returns {Promise<Stats & { perSecond: number, unexpected: number }>}
 */
export async function closedLoop({ request, concurrency, seconds, warmupSeconds = 1 }) {
  /** @type {number[]} */
  const latencies = [];
  let unexpected = 0;
  const warmupEnd = performance.now() + warmupSeconds * 1000;
  const end = warmupEnd + seconds * 1000;
  async function worker() {
    while (performance.now() < end) {
      const t0 = performance.now();
      const ok = await request();
      const t1 = performance.now();
      if (t0 >= warmupEnd) {
        latencies.push(t1 - t0);
        if (!ok) unexpected += 1;
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { ...stats(latencies), perSecond: latencies.length / seconds, unexpected };
}

/**
 * A figure with `digits` decimals, or n/a.
 * @param {number} n
 */
export const fmt = (n, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

/**
 * The figures of variants measured in alternating rounds (`{name, latencies, ...}` each): a
 * field's total and mean over one variant's rounds, the latency of all its samples, and the
 * rounds with their latency figures in place of the samples.
 * @template {{ name: string, latencies: number[] }} R
 * @param {R[]} rounds
 */
export function roundFigures(rounds) {
  /** @param {string} name */
  const own = (name) => rounds.filter((r) => r.name === name);
  /**
   * @param {string} name
   * @param {keyof R} field a numeric one
   */
  const total = (name, field) => own(name).reduce((sum, r) => sum + Number(r[field]), 0);
  return {
    total,
    /**
     * @param {string} name
     * @param {keyof R} field a numeric one
     */
    mean: (name, field) => total(name, field) / own(name).length,
    /** @param {string} name */
    latency: (name) => stats(own(name).flatMap((r) => r.latencies)),
    summary: () => rounds.map(({ latencies, ...r }) => ({ ...r, ...stats(latencies) })),
  };
}
