// What publishing an Event to Kafka costs at the least, and what that and PostgreSQL's rows
// leave of the machine. The relay's producer (createProducer of @herald/kafka, on
// @platformatic/kafka: idempotent, one request in flight, keys partitioned as by the Java
// client) sends batches of 1,000 messages
// shaped like `event.recorded` (key, JSON value, traceparent header), one batch at a time as
// the relay does, to a topic of the benchmark's own with the events topic's partitions. The
// messages are built once beforehand: the figure is the client's and the broker's CPU per
// message (this process's, and the Kafka process's from /proc), and nothing the relay does
// besides. Beside it, with the same messages, each on a topic of its own, in alternating rounds:
// kafkajs as the relay used it and in its cheapest shape, Confluent's librdkafka client and
// @platformatic/kafka with its own partitioner (kafka-candidates.mjs; installed on first use,
// kafka-clients.mjs). Run after event-rows in the same invocation, it adds PostgreSQL's CPU per
// Event for the rows a recording needs and prints the most Events/s these parts alone leave room
// for on this machine's cores, from the relay's figures: a ceiling above every HTTP, parsing and
// validation cost.
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { kafkaBrokers } from '@herald/stack/index.mjs';
import { kafkaCandidates, javaPartition } from './kafka-candidates.mjs';
import { kafkaClients } from './kafka-clients.mjs';
import { measureCandidates } from './kafka-publish-measure.mjs';
import {
  BASELINE,
  candidateChartRows,
  candidateNotes,
  candidateTable,
} from './kafka-publish-report.mjs';
import { eventRecordedValue, fmt, machineCores } from './lib.mjs';
import { cpuReading, stackPids } from './procstat.mjs';

export const name = 'kafka-publish';

const BATCH = 1000;
const CONTACTS = 256;
const ROUNDS = 2;
/** Distinct batches sent in turn (keys and ids differ, as between relay polls): 20,000 messages. */
const POOL = 20;
/** Each candidate's topic is this with its name appended. */
const TOPIC = 'herald.bench.kafka-publish';
/** Seconds each variant of a candidate with several is measured to keep the cheapest. */
const CHOICE_SECONDS = 3;
/** Messages of distinct keys sent alone to see which partition each candidate writes them to. */
const PROBES = 64;
/** The array targets' rates: what the ceiling is compared with. */
export const TARGET_RATES = [40_000, 50_000];

/**
 * One batch of messages as the relay hands them to its producer.
 * @param {string} tenant
 * @param {string[]} contacts
 * @param {string} startedAt
 * @param {number} first the batch's first message, counted over all batches
 * @returns {import('./kafka-candidates.mjs').BenchMessage[]}
 */
function messageBatch(tenant, contacts, startedAt, first) {
  return Array.from({ length: BATCH }, (_, i) => {
    const id = randomUUID();
    const contactId = contacts[(first + i) % contacts.length];
    return {
      key: `${tenant}:contact:${contactId}`,
      value: eventRecordedValue({
        id,
        tenantId: tenant,
        contactId,
        dedupKey: `bench-${startedAt}-${first + i}`,
        at: startedAt,
      }),
      // An unsampled request's trace context, as most stored rows carry.
      headers: {
        traceparent: `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-00`,
      },
    };
  });
}

/** @param {import('./lib.mjs').RunOptions} options */
export async function run({ seconds, warmup, earlier = {} }) {
  const startedAt = new Date().toISOString();
  // Built by the stack's `up` before this runs.
  const { createKafka, createProducer, ensureTopics, murmur2 } = await import('@herald/kafka');
  const { TOPIC_SETTINGS, TOPICS } = await import('@herald/messages');
  const { kafka: kafkaPid } = await stackPids();
  if (!kafkaPid) throw new Error('the stack reports no Kafka process to measure');
  const partitions = TOPIC_SETTINGS[TOPICS.eventsRecorded].partitions;
  const clients = await kafkaClients();
  const brokers = kafkaBrokers.split(',');
  const kafka = createKafka({ brokers, clientId: 'herald-bench' });
  const candidates = kafkaCandidates({
    relayProducer: () => createProducer(kafka),
    relayVersion: `@platformatic/kafka ${relayClientVersion()}`,
    clients,
    brokers,
    topicOf: (candidate) => `${TOPIC}.${candidate}`,
  });
  const topics = candidates.filter((c) => c.open).map((c) => `${TOPIC}.${c.name}`);
  // The admin client is open only while it works: an idle connection costs CPU.
  await withAdmin(kafka, (admin) => deleteTopics(admin, topics));
  await ensureTopics(
    kafka,
    topics.map((topic) => ({ topic, numPartitions: partitions })),
  );
  try {
    const tenant = randomUUID();
    const contacts = Array.from({ length: CONTACTS }, () => randomUUID());
    const batches = Array.from({ length: POOL }, (_, i) =>
      messageBatch(tenant, contacts, startedAt, i * BATCH),
    );
    /** @type {import('./kafka-publish-measure.mjs').Bench} */
    const bench = {
      batches,
      // The producers are this process (`bench`, librdkafka's threads too), the broker Kafka.
      cpu: () => cpuReading({ kafka: kafkaPid }).ms,
      seconds,
      warmup: Math.max(warmup, 3),
      rounds: ROUNDS,
      choiceSeconds: CHOICE_SECONDS,
      probes: batches[0].slice(0, PROBES),
      expected: (key) => javaPartition(murmur2, key, partitions),
    };
    console.log(
      `\n## kafka-publish (${BATCH}-message batches to ${partitions} partitions, a topic per candidate; ` +
        'idempotent, acks from all replicas, keys partitioned as by the Java client; rounds alternate)',
    );
    const results = await measureCandidates(candidates, bench);
    return report({ startedAt, seconds, partitions, results, earlier });
  } finally {
    await withAdmin(kafka, (admin) => deleteTopics(admin, topics)).catch(() => undefined);
  }
}

/** The version of the relay's client, @platformatic/kafka, as @herald/kafka resolves it. */
function relayClientVersion() {
  const require = createRequire(createRequire(import.meta.url).resolve('@herald/kafka'));
  // Its `exports` do not list its package.json: read it beside its entry (dist/index.js).
  const entry = require.resolve('@platformatic/kafka');
  const manifest = path.join(path.dirname(entry), '..', 'package.json');
  return String(JSON.parse(fs.readFileSync(manifest, 'utf8')).version);
}

/**
 * `fn` with an admin client, closed afterwards.
 * @template T
 * @param {import('@herald/kafka').Kafka} kafka
 * @param {(admin: import('@herald/kafka').Admin) => Promise<T>} fn
 */
async function withAdmin(kafka, fn) {
  const admin = kafka.admin();
  try {
    return await fn(admin);
  } finally {
    await admin.close().catch(() => undefined);
  }
}

/**
 * Deletes those of the topics that exist.
 * @param {import('@herald/kafka').Admin} admin
 * @param {string[]} topics
 */
async function deleteTopics(admin, topics) {
  const old = (await admin.listTopics()).filter((t) => topics.includes(t));
  if (old.length > 0) await admin.deleteTopics({ topics: old });
}

/**
 * Prints the candidates and the ceiling; the results keep the relay's figures where they always
 * were, and every candidate's under `candidates`.
 * @param {{ startedAt: string, seconds: number, partitions: number,
 *   results: import('./kafka-publish-report.mjs').CandidateResult[], earlier: Record<string, unknown> }} r
 */
function report({ startedAt, seconds, partitions, results, earlier }) {
  for (const note of candidateNotes(results)) console.log(`- ${note}`);
  console.log(
    'Latency per send call, from the call to the acknowledgement of all its messages; CPU vs ' +
      "the relay today: producer and broker CPU per message against those of the relay's producer.",
  );
  console.log(candidateTable(results));
  const today = results.find((r) => r.name === BASELINE);
  const measured = {
    startedAt,
    cores: machineCores(),
    seconds,
    batch: BATCH,
    partitions,
    rounds: today.rounds.map((r) => ({ ...r, name: 'publish' })),
    messagesPerSecond: today.messagesPerSecond,
    producerUsPerMessage: today.producerUsPerMessage,
    brokerUsPerMessage: today.brokerUsPerMessage,
    latency: today.latency,
    candidates: results,
  };
  // What event-rows returned, when it ran first in this invocation.
  const eventRows = /** @type {Parameters<typeof ceiling>[1]} */ (earlier['event-rows']);
  const result = { ...measured, ceiling: ceiling(measured, eventRows) };
  printCeiling(result);
  return result;
}

/**
 * The least CPU per Event of the parts measured, and the Events/s the machine's cores hold at
 * that cost. `least`: what any design spends that stores an Event in PostgreSQL and publishes it
 * with this client and broker (the Event row, the producer, the broker). `design`: this design's
 * rows on top (the outbox message and the dedup claim, the relay's read and delete). Without
 * event-rows' figures from the same invocation, publishing alone.
 * @param {{ cores: number, producerUsPerMessage: number, brokerUsPerMessage: number }} publish
 * @param {{ measurements: { name: string, primary: { value: number } }[] }} [eventRows]
 */
export function ceiling(publish, eventRows) {
  /** @param {string} n */
  const figure = (n) => eventRows?.measurements.find((m) => m.name === n)?.primary.value ?? NaN;
  const publishing = [
    { name: 'producer', label: 'the relay producer', us: publish.producerUsPerMessage },
    { name: 'broker', label: 'Kafka broker', us: publish.brokerUsPerMessage },
  ];
  const eventRow = { name: 'event-row', label: 'PostgreSQL: the Event row', us: figure('event') };
  const designRows = {
    name: 'design-rows',
    label: 'PostgreSQL: message, claim, relay',
    us: figure('event-message-claim') - figure('event') + figure('relay'),
  };
  /**
   * @param {string} name
   * @param {string} label
   * @param {{ us: number }[]} parts
   */
  const sumOf = (name, label, parts) => {
    const us = parts.reduce((sum, p) => sum + p.us, 0);
    return {
      name,
      label,
      us,
      eventsPerSecond: (publish.cores * 1e6) / us,
      coresNeeded: TARGET_RATES.map((rate) => (us * rate) / 1e6),
    };
  };
  const sums = eventRows
    ? [
        sumOf('least', 'any design: Event row + publish', [eventRow, ...publishing]),
        sumOf('design', 'this design: its rows + publish', [eventRow, designRows, ...publishing]),
      ]
    : [sumOf('publish', 'publishing alone', publishing)];
  return {
    parts: eventRows ? [eventRow, designRows, ...publishing] : publishing,
    sums,
    budgets: TARGET_RATES.map((rate) => ({ rate, usPerEvent: (publish.cores * 1e6) / rate })),
  };
}

/**
 * The parts' CPU per Event against the budgets, and what each sum leaves room for.
 * @param {{ cores: number, ceiling: ReturnType<typeof ceiling> }} result
 */
function printCeiling({ cores, ceiling: c }) {
  console.log(
    `CPU per Event, µs: ${c.parts.map((p) => `${p.label} ${fmt(p.us)}`).join(', ')}. ` +
      `Budget on ${cores} cores: ${c.budgets.map((b) => `${fmt(b.usPerEvent)} at ${b.rate.toLocaleString('en-US')}/s`).join(', ')}, ` +
      'for everything (HTTP, parsing, validation, the ingress and the load generator included).',
  );
  for (const sum of c.sums) {
    const needed = c.budgets
      .map((b, i) => `${fmt(sum.coresNeeded[i], 2)} cores at ${b.rate.toLocaleString('en-US')}/s`)
      .join(', ');
    console.log(
      `  ${sum.label}: ${fmt(sum.us)} µs, at most ${fmt(sum.eventsPerSecond, 0)} Events/s on ` +
        `this machine; alone it takes ${needed}`,
    );
  }
  if (c.sums.length === 1) {
    console.log("  (run event-rows in the same invocation to add PostgreSQL's rows)");
  }
}

/**
 * The chart's input (chart.mjs): the budgets, each part's cost and their sums on one scale, and
 * each candidate's producer and broker CPU per message.
 * @param {{ startedAt: string, cores: number, seconds: number, batch: number,
 *   partitions: number, messagesPerSecond: number, latency: { p50: number, p99: number },
 *   ceiling: ReturnType<typeof ceiling>,
 *   candidates?: import('./kafka-publish-report.mjs').CandidateResult[] }} s
 */
export function chartData(s) {
  const { ceiling: c } = s;
  /**
   * @param {string} name
   * @param {string} label
   * @param {string} group
   * @param {number} value
   * @param {boolean | null} pass
   * @param {{ p50?: number, p99?: number }} [latency]
   */
  const row = (name, label, group, value, pass, latency = {}) => ({
    name,
    label,
    group,
    primary: { value, unit: 'µs/Event' },
    p50: latency.p50 ?? NaN,
    p99: latency.p99 ?? NaN,
    p99Target: null,
    pass,
    failed: 0,
  });
  // A sum fits when it leaves room under the smallest budget (the highest target rate's).
  const tightest = Math.min(...c.budgets.map((b) => b.usPerEvent));
  return {
    title: 'Herald Kafka publish benchmark: the least CPU an Event needs, against the budget',
    subtitle: `${s.startedAt}, ${s.cores} cores, ${s.seconds} s per round, ${s.batch}-message batches to ${s.partitions} partitions, ${fmt(s.messagesPerSecond, 0)} messages/s`,
    measurements: [
      ...c.budgets.map((b) =>
        row(
          `budget-${b.rate}`,
          `budget at ${b.rate.toLocaleString('en-US')} Events/s`,
          'floor',
          b.usPerEvent,
          null,
        ),
      ),
      ...c.parts.map((p) =>
        row(p.name, p.label, 'part', p.us, null, p.name === 'producer' ? s.latency : {}),
      ),
      ...c.sums.map((sum) => row(sum.name, sum.label, 'sum', sum.us, sum.us < tightest)),
      // Each candidate's producer and broker, on the scale of the relay's parts above.
      ...candidateChartRows(s.candidates ?? []),
    ],
    primaryPanel: {
      title:
        'CPU per Event, µs, all cores together: one scale for every bar (green: under every budget)',
      sharedScale: true,
    },
    legend: { floor: 'budget: cores ÷ target rate', floorShare: 'not drawn here' },
  };
}
