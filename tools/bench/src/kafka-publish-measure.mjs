// How kafka-publish measures a candidate: its calls sent back to back for a while with this
// process's CPU (every thread: librdkafka's too) and the broker's per message, the choice of a
// candidate's cheapest variant, a check that keys land where the Java client puts them, and the
// rounds that alternate between the candidates. Each measurement opens its producer and closes
// it afterwards, so that no other producer is open meanwhile: an idle kafkajs connection keeps
// re-arming a 1 ms timer (its request queue schedules its next check at a negative delay), a
// few percent of a core that would be charged to whichever candidate is measured.
import { BASELINE, measuredResult, roundsTable, withRatios } from './kafka-publish-report.mjs';

/**
 * A candidate opened with the variant it runs: its calls, prepared beforehand, sent in turn.
 * @typedef {object} Opened
 * @property {import('./kafka-candidates.mjs').Candidate} candidate
 * @property {import('./kafka-candidates.mjs').Variant} variant
 * @property {import('./kafka-candidates.mjs').Sender} sender
 * @property {unknown[]} payloads
 * @property {number[]} sizes each payload's messages
 * @property {number} turn
 */
/**
 * @typedef {object} Measured
 * @property {string} name the candidate's
 * @property {number} messages
 * @property {number} messagesPerSecond
 * @property {number[]} latencies ms per send call, call to acknowledgement
 * @property {number} producerUsPerMessage
 * @property {number} brokerUsPerMessage
 */
/** @typedef {() => Record<string, number | null>} CpuReader this process's (`bench`) and the broker's (`kafka`) CPU ms so far */

/**
 * The messages grouped into calls of `perSend`, consecutive batches concatenated.
 * @template T
 * @param {T[][]} batches
 * @param {number} perSend a multiple of a batch's length that divides their total
 * @returns {T[][]}
 */
export function callsOf(batches, perSend) {
  const all = batches.flat();
  if (perSend <= 0 || all.length % perSend !== 0) {
    throw new Error(`${all.length} messages do not make calls of ${perSend}`);
  }
  return Array.from({ length: all.length / perSend }, (_, i) =>
    all.slice(i * perSend, (i + 1) * perSend),
  );
}

/**
 * The candidate's calls sent for `forSeconds`, `inFlight` at a time: messages/s, the latency of
 * each call and the CPU of this process and the broker per message.
 * @param {Opened} opened
 * @param {number} forSeconds
 * @param {CpuReader} cpu
 * @returns {Promise<Measured>}
 */
export async function publish(opened, forSeconds, cpu) {
  const { sender, payloads, sizes } = opened;
  /** @type {number[]} */
  const latencies = [];
  let messages = 0;
  const before = cpu();
  const started = performance.now();
  const end = started + forSeconds * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const i = opened.turn++ % payloads.length;
      const sent = performance.now();
      await sender.send(payloads[i]);
      latencies.push(performance.now() - sent);
      messages += sizes[i];
    }
  };
  await Promise.all(Array.from({ length: opened.variant.inFlight }, worker));
  const elapsed = (performance.now() - started) / 1000;
  const after = cpu();
  return {
    name: opened.candidate.name,
    messages,
    messagesPerSecond: messages / elapsed,
    latencies,
    producerUsPerMessage: ((after.bench - before.bench) * 1000) / messages,
    brokerUsPerMessage: ((after.kafka - before.kafka) * 1000) / messages,
  };
}

/**
 * One variant opened, its calls prepared, for the length of `fn`.
 * @template T
 * @param {import('./kafka-candidates.mjs').Candidate} candidate
 * @param {import('./kafka-candidates.mjs').Variant} variant
 * @param {import('./kafka-candidates.mjs').BenchMessage[][]} batches
 * @param {(opened: Opened) => Promise<T>} fn
 * @returns {Promise<T>}
 */
async function withOpened(candidate, variant, batches, fn) {
  const sender = await candidate.open(variant);
  try {
    const calls = callsOf(batches, variant.messagesPerSend);
    const payloads = calls.map((c) => sender.prepare(c));
    const sizes = calls.map((c) => c.length);
    return await fn({ candidate, variant, sender, payloads, sizes, turn: 0 });
  } finally {
    await sender.close().catch(() => undefined);
  }
}

/**
 * One measurement of `seconds` on a producer opened for it, after a second unmeasured.
 * @param {import('./kafka-candidates.mjs').Candidate} candidate
 * @param {import('./kafka-candidates.mjs').Variant} variant
 * @param {Bench} bench
 * @param {number} seconds
 */
function measureOnce(candidate, variant, { batches, cpu }, seconds) {
  return withOpened(candidate, variant, batches, async (opened) => {
    await publish(opened, 1, cpu);
    return publish(opened, seconds, cpu);
  });
}

/**
 * Several measurements of one variant as one: their messages, CPU and latencies together.
 * @param {Measured[]} parts
 * @returns {Measured}
 */
export function combined(parts) {
  const messages = parts.reduce((n, p) => n + p.messages, 0);
  const seconds = parts.reduce((n, p) => n + p.messages / p.messagesPerSecond, 0);
  /** @param {'producerUsPerMessage' | 'brokerUsPerMessage'} f */
  const perMessage = (f) => parts.reduce((n, p) => n + p[f] * p.messages, 0) / messages;
  return {
    name: parts[0].name,
    messages,
    messagesPerSecond: messages / seconds,
    latencies: parts.flatMap((p) => p.latencies),
    producerUsPerMessage: perMessage('producerUsPerMessage'),
    brokerUsPerMessage: perMessage('brokerUsPerMessage'),
  };
}

/**
 * The index of the cheapest measurement (producer and broker CPU per message); one that sent
 * nothing (NaN) never is, unless all are.
 * @param {Measured[]} measured
 */
export function cheapest(measured) {
  const cost = (/** @type {Measured} */ m) => m.producerUsPerMessage + m.brokerUsPerMessage;
  return measured.reduce(
    (best, m, i) =>
      cost(m) < cost(measured[best]) || Number.isNaN(cost(measured[best])) ? i : best,
    0,
  );
}

/**
 * The candidate's cheapest variant: with several, each is measured in two passes of half of
 * `bench.choiceSeconds` that alternate between them, as the rounds alternate between candidates.
 * @param {import('./kafka-candidates.mjs').Candidate} candidate
 * @param {Bench} bench
 * @returns {Promise<{ variant: import('./kafka-candidates.mjs').Variant, tried: Measured[] }>}
 */
async function cheapestVariant(candidate, bench) {
  const { variants } = candidate;
  if (variants.length === 1) return { variant: variants[0], tried: [] };
  /** @type {Measured[][]} */
  const parts = variants.map(() => []);
  for (let pass = 0; pass < 2; pass += 1) {
    for (const [i, variant] of variants.entries()) {
      parts[i].push(await measureOnce(candidate, variant, bench, bench.choiceSeconds / 2));
    }
  }
  const tried = parts.map(combined);
  return { variant: variants[cheapest(tried)], tried };
}

/**
 * Each probe sent alone; how many landed in the partition the Java client would pick, and the
 * first that did not.
 * @param {Opened} opened
 * @param {import('./kafka-candidates.mjs').BenchMessage[]} probes
 * @param {(key: string) => number} expected
 */
export async function checkPartitioning(opened, probes, expected) {
  let asJava = 0;
  /** @type {{ key: string, partition: number, expected: number } | null} */
  let first = null;
  for (const message of probes) {
    const partition = await opened.sender.partitionOf(message);
    if (partition === expected(message.key)) asJava += 1;
    else first ??= { key: message.key, partition, expected: expected(message.key) };
  }
  return { probed: probes.length, asJava, ...(first ? { firstMismatch: first } : {}) };
}

/**
 * What measuring the candidates needs: the batches, the CPU reader, the lengths, the probes and
 * the partition the Java client gives a key.
 * @typedef {object} Bench
 * @property {import('./kafka-candidates.mjs').BenchMessage[][]} batches
 * @property {CpuReader} cpu
 * @property {number} seconds each round's
 * @property {number} warmup unmeasured seconds before a candidate's rounds (3 at the least)
 * @property {number} rounds rounds of each candidate
 * @property {number} choiceSeconds each variant's, when a candidate has several
 * @property {import('./kafka-candidates.mjs').BenchMessage[]} probes messages of distinct keys
 * @property {(key: string) => number} expected the partition the Java client gives a key
 */

/**
 * The choice, warm-up and partitioning of one candidate, once its cheapest variant is known.
 * @typedef {{ variant: import('./kafka-candidates.mjs').Variant, tried: Measured[],
 *   partitioning: { probed: number, asJava: number } }} Chosen
 */

/**
 * Every installed candidate's cheapest variant, warmed up (a cold client and broker cost
 * several times more) and probed for its partitioning, then measured in rounds that alternate
 * between the candidates so machine noise hits all alike. A candidate that fails is reported
 * with its error and the others go on; the relay's own producer must not fail.
 * @param {import('./kafka-candidates.mjs').Candidate[]} candidates
 * @param {Bench} bench
 * @returns {Promise<import('./kafka-publish-report.mjs').CandidateResult[]>}
 */
export async function measureCandidates(candidates, bench) {
  const { batches, cpu, seconds, warmup, expected } = bench;
  /** @type {Map<string, string>} */
  const failed = new Map();
  /** @param {string} candidate @param {Error} error */
  const fail = (candidate, error) => {
    if (candidate === BASELINE) throw error;
    failed.set(candidate, `failed: ${String(error.message).split('\n')[0]}`);
    console.log(`kafka-publish: ${candidate} ${failed.get(candidate)}; going on without it`);
  };
  /** @type {Map<string, Chosen>} */
  const chosen = new Map();
  for (const candidate of candidates.filter((c) => c.open)) {
    try {
      const { variant, tried } = await cheapestVariant(candidate, bench);
      const partitioning = await withOpened(candidate, variant, batches, async (o) => {
        await publish(o, warmup, cpu);
        return checkPartitioning(o, bench.probes, expected);
      });
      chosen.set(candidate.name, { variant, tried, partitioning });
    } catch (error) {
      fail(candidate.name, error);
    }
  }
  /** @type {(Measured & { round: number })[]} */
  const rounds = [];
  for (let round = 1; round <= bench.rounds; round += 1) {
    for (const candidate of candidates.filter((c) => chosen.has(c.name) && !failed.has(c.name))) {
      try {
        const { variant } = chosen.get(candidate.name);
        rounds.push({ round, ...(await measureOnce(candidate, variant, bench, seconds)) });
      } catch (error) {
        fail(candidate.name, error);
      }
    }
  }
  const labels = Object.fromEntries(candidates.map((c) => [c.name, c.label]));
  console.log(roundsTable(rounds, labels));
  return withRatios(candidates.map((c) => resultOf(c, { chosen, failed, rounds })));
}

/**
 * One candidate's result: its figures, or why it has none.
 * @param {import('./kafka-candidates.mjs').Candidate} c
 * @param {{ chosen: Map<string, Chosen>, failed: Map<string, string>, rounds: Measured[] }} measured
 * @returns {import('./kafka-publish-report.mjs').CandidateResult}
 */
function resultOf(c, { chosen, failed, rounds }) {
  const base = { name: c.name, label: c.label, version: c.version };
  const installSeconds = c.installSeconds ?? null;
  if (!c.open) {
    return { ...base, installed: false, installSeconds, reason: `not installed: ${c.reason}` };
  }
  if (failed.has(c.name) || !chosen.has(c.name)) {
    return { ...base, installed: true, installSeconds, reason: failed.get(c.name) };
  }
  const { variant, tried, partitioning } = chosen.get(c.name);
  const { settings, messagesPerSend, inFlight } = variant;
  return measuredResult(
    {
      ...base,
      installSeconds,
      settings,
      messagesPerSend,
      inFlight,
      tried: tried.map(({ latencies: _, ...t }, i) => ({ settings: c.variants[i].settings, ...t })),
      partitioning,
    },
    rounds.filter((r) => r.name === c.name),
  );
}
