// Small helpers shared by the benchmarks: percentiles, a closed-loop load generator, the
// figures of variants measured in alternating rounds, the machine's cores, and the value of an
// `event.recorded` message as the database benchmarks write and publish it.
import os from 'node:os';
import { performance } from 'node:perf_hooks';

/** The cores the benchmarks share (the budget every per-request CPU figure is read against). */
export const machineCores = () => os.availableParallelism?.() ?? os.cpus().length;

/** The properties of the database benchmarks' Events. */
export const EVENT_PROPERTIES = { plan: 'pro', amount: 42.5, path: '/checkout', items: ['a'] };

/** The JSON value of an `event.recorded` message about a Contact, received when it occurred. */
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

export function percentile(sortedMs, p) {
  if (sortedMs.length === 0) return NaN;
  const i = Math.min(sortedMs.length - 1, Math.ceil((p / 100) * sortedMs.length) - 1);
  return sortedMs[Math.max(0, i)];
}

export function stats(samplesMs) {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const mean = sorted.reduce((s, x) => s + x, 0) / (sorted.length || 1);
  return { count: sorted.length, mean, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

/**
 * Runs `request()` from `concurrency` loops for `seconds` (after `warmupSeconds` not
 * counted); `request` resolves to true for an expected answer. Bounded in time by design.
 */
export async function closedLoop({ request, concurrency, seconds, warmupSeconds = 1 }) {
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

export const fmt = (n, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

/**
 * The figures of variants measured in alternating rounds (`{name, latencies, ...}` each): a
 * field's total and mean over one variant's rounds, the latency of all its samples, and the
 * rounds with their latency figures in place of the samples.
 */
export function roundFigures(rounds) {
  const own = (name) => rounds.filter((r) => r.name === name);
  const total = (name, field) => own(name).reduce((sum, r) => sum + r[field], 0);
  return {
    total,
    mean: (name, field) => total(name, field) / own(name).length,
    latency: (name) => stats(own(name).flatMap((r) => r.latencies)),
    summary: () => rounds.map(({ latencies, ...r }) => ({ ...r, ...stats(latencies) })),
  };
}
