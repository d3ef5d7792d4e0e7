// The SDK tracker measurement's load, in a Node process of its own (sdk-tracker.mjs starts it),
// so that /proc counts the SDK's CPU apart from the benchmark's: @herald/client's batching
// tracker, as a customer's server runs it. One HeraldClient and tracker per key (`trackers` of
// them, the connections of the wrk measurements), each queuing by-contact-id Events as fast as it
// sends them: at most two batches per tracker held (one in flight, one full batch queued), so
// the tracker, not a queue limit, sets the pace. Every Event gets a dedupKey
// "<runId>.<measurement>.<tracker>.<n>" (the publish-lag consumer reads the measurement from it).
//
// Protocol, one JSON line each on stdout: after `warmup` seconds and a flush, `SDK_READY {...}`;
// then, once "go" arrives on stdin, `seconds` of load, close() of every tracker (what is queued
// is sent), `SDK_RESULT {...}`. The process exits when stdin ends, so the parent reads its CPU
// from /proc while it still runs.
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import readline from 'node:readline';
import { HeraldClient } from '@herald/client';
import { stats } from './lib.mjs';

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const { flushAt, trackers: count, runId, name } = config;

/**
 * Figures of one phase (warm-up, measurement), from the fetch the clients send with.
 * @typedef {{ tracked: number, failedEvents: number, requests: number, ok: number,
 *   networkErrors: number, statuses: Record<string, number>, latencies: number[],
 *   errors: string[] }} Tally
 */
/** @returns {Tally} */
const tally = () => ({
  tracked: 0,
  failedEvents: 0,
  requests: 0,
  ok: 0,
  networkErrors: 0,
  statuses: {},
  latencies: [],
  errors: [],
});
let phase = tally();

/**
 * Per tracker: the producer waiting for an answer, if any.
 * @type {((() => void) | undefined)[]}
 */
const waiting = new Array(count);
/** @param {number} i */
function wake(i) {
  const resolve = waiting[i];
  waiting[i] = undefined;
  resolve?.();
}
/**
 * Resolves after the tracker's next Event answer has been handled (at most 100 ms).
 * @param {number} i
 * @returns {Promise<void>}
 */
function nextAnswer(i) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => wake(i), 100);
    waiting[i] = () => {
      clearTimeout(timer);
      resolve();
    };
  });
}

/**
 * The global fetch, counting Event requests. The SDK reads each answer with text(); `wake` runs
 * after the microtasks that follow it, when the tracker has taken its next batch.
 * @param {number} i
 * @returns {import('@herald/client').FetchLike}
 */
function countingFetch(i) {
  return async (url, init) => {
    const counted = url.includes('/v1/events/');
    const into = phase;
    const start = performance.now();
    let res;
    try {
      res = await fetch(url, init);
    } catch (error) {
      if (counted) {
        into.requests += 1;
        into.networkErrors += 1;
        setImmediate(wake, i);
      }
      throw error;
    }
    if (!counted) return res;
    const read = res.text.bind(res);
    // The answer's text(), wrapped: Object.assign sets it as `res.text = ...` would, which the
    // types refuse (they declare it read-only; it is a plain method of the prototype).
    Object.assign(res, {
      text: async () => {
        try {
          return await read();
        } finally {
          into.requests += 1;
          into.statuses[res.status] = (into.statuses[res.status] ?? 0) + 1;
          if (res.ok) into.ok += 1;
          into.latencies.push(performance.now() - start);
          setImmediate(wake, i);
        }
      },
    });
    return res;
  };
}

const trackers = Array.from({ length: count }, (_, i) => {
  const key = config.keys[i % config.keys.length];
  const client = new HeraldClient({
    baseUrl: config.ingressUrl,
    clientId: key.clientId,
    secret: key.secret,
    fetch: countingFetch(i),
  });
  return client.tracker({
    flushAt,
    maxQueueSize: 4 * flushAt,
    onError(error, events) {
      phase.failedEvents += events.length;
      if (phase.errors.length < 5) phase.errors.push(`${error.name}: ${error.message}`);
    },
  });
});

/**
 * Tracker `i` queues Events until `until`, keeping two batches held.
 * @param {number} i
 * @param {number} until
 * @param {string} label the measurement's name in the dedupKeys
 */
async function produce(i, until, label) {
  const tracker = trackers[i];
  const contacts = config.contactIds;
  let n = 0;
  while (performance.now() < until) {
    while (tracker.size < 2 * flushAt) {
      tracker.track('by-contact-id', {
        contactId: contacts[(i * 7919 + n) % contacts.length],
        eventName: config.eventName,
        properties: config.properties,
        dedupKey: `${runId}.${label}.${i}.${n}`,
      });
      n += 1;
    }
    await nextAnswer(i);
  }
  phase.tracked += n;
}

/**
 * A phase's figures as the parent reads them (sdk-tracker.mjs `SdkFigures`).
 * @param {Tally} tally
 * @param {number} seconds
 */
function summary(tally, seconds) {
  const { latencies, ...rest } = tally;
  const { p50, p99, mean } = stats(latencies);
  return { ...rest, seconds, p50, p99, mean, accepted: tally.tracked - tally.failedEvents };
}

// Warm-up: token exchanges, connections, JIT; then everything sent.
const warmupEnd = performance.now() + config.warmup * 1000;
await Promise.all(trackers.map((_, i) => produce(i, warmupEnd, `${name}-warmup`)));
await Promise.all(trackers.map((t) => t.flush()));
console.log(`SDK_READY ${JSON.stringify(summary(phase, config.warmup))}`);

const input = readline.createInterface({ input: process.stdin });
const lines = input[Symbol.asyncIterator]();
const go = await lines.next();
if (go.done || go.value.trim() !== 'go') process.exit(1);

phase = tally();
const cpuBefore = process.cpuUsage();
const start = performance.now();
await Promise.all(trackers.map((_, i) => produce(i, start + config.seconds * 1000, name)));
await Promise.all(trackers.map((t) => t.close()));
const seconds = (performance.now() - start) / 1000;
const cpu = process.cpuUsage(cpuBefore);
console.log(
  `SDK_RESULT ${JSON.stringify({ ...summary(phase, seconds), ownCpuMs: (cpu.user + cpu.system) / 1000 })}`,
);

// Until the parent has read this process's CPU and closes stdin.
while (!(await lines.next()).done);
process.exit(0);
