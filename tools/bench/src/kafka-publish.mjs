// What publishing an Event to Kafka costs at the least, and what that and PostgreSQL's rows
// leave of the machine. The relay's producer (createProducer of @herald/kafka: idempotent, one
// request in flight, keys partitioned as by the Java client) sends batches of 1,000 messages
// shaped like `event.recorded` (key, JSON value, traceparent header), one batch at a time as
// the relay does, to a topic of the benchmark's own with the events topic's partitions. The
// messages are built once beforehand: the figure is the client's and the broker's CPU per
// message (this process's, and the Kafka process's from /proc), and nothing the relay does
// besides. Run after event-rows in the same invocation, it adds PostgreSQL's CPU per Event for
// the rows a recording needs and prints the most Events/s these parts alone leave room for on
// this machine's cores: a ceiling above every HTTP, parsing and validation cost.
import { randomBytes, randomUUID } from 'node:crypto';
import { kafkaBrokers } from '@herald/stack/index.mjs';
import { eventRecordedValue, fmt, machineCores, roundFigures, stats } from './lib.mjs';
import { cpuReading, stackPids } from './procstat.mjs';

export const name = 'kafka-publish';

const BATCH = 1000;
const CONTACTS = 256;
const ROUNDS = 2;
/** Distinct batches sent in turn (keys and ids differ, as they do between relay polls). */
const POOL = 8;
const TOPIC = 'herald.bench.kafka-publish';
/** The array targets' rates: what the ceiling is compared with. */
export const TARGET_RATES = [40_000, 50_000];

/**
 * One batch of messages as the relay hands them to kafkajs.
 * @param {string} tenant
 * @param {string[]} contacts
 * @param {string} startedAt
 * @param {number} first the batch's first message, counted over all batches
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

/**
 * What the rounds share: the producer, the batches it sends in turn, and the CPU so far of this
 * process (`bench`, the producer) and the broker (`kafka`).
 * @typedef {object} Sender
 * @property {import('kafkajs').Producer} producer
 * @property {ReturnType<typeof messageBatch>[]} batches
 * @property {number} turn
 * @property {() => Record<string, number | null>} cpu
 */

/** @param {import('./lib.mjs').RunOptions} options */
export async function run({ seconds, warmup, earlier = {} }) {
  const startedAt = new Date().toISOString();
  // Built by the stack's `up` before this runs.
  const { createKafka, createProducer } = await import('@herald/kafka');
  const { TOPIC_SETTINGS, TOPICS } = await import('@herald/messages');
  const { kafka: kafkaPid } = await stackPids();
  if (!kafkaPid) throw new Error('the stack reports no Kafka process to measure');
  const partitions = TOPIC_SETTINGS[TOPICS.eventsRecorded].partitions;

  const kafka = createKafka({ brokers: kafkaBrokers.split(','), clientId: 'herald-bench' });
  const admin = kafka.admin();
  const producer = createProducer(kafka);
  await admin.connect();
  try {
    if ((await admin.listTopics()).includes(TOPIC)) await admin.deleteTopics({ topics: [TOPIC] });
    await admin.createTopics({
      topics: [{ topic: TOPIC, numPartitions: partitions }],
      waitForLeaders: true,
    });
    await producer.connect();
    const tenant = randomUUID();
    const contacts = Array.from({ length: CONTACTS }, () => randomUUID());
    /** @type {Sender} */
    const sender = {
      producer,
      batches: Array.from({ length: POOL }, (_, i) =>
        messageBatch(tenant, contacts, startedAt, i * BATCH),
      ),
      turn: 0,
      // The producer is this process (`bench`), the broker the Kafka process.
      cpu: () => cpuReading({ kafka: kafkaPid }).ms,
    };
    console.log(
      `\n## kafka-publish (${BATCH}-message batches, one in flight, to ${partitions} partitions; the relay's producer)`,
    );
    // Both the client's JIT and the broker's warm up first: a cold broker costs several times more.
    await publish(sender, Math.max(warmup, 3));
    const rounds = [];
    for (let round = 1; round <= ROUNDS; round += 1) {
      rounds.push({ round, ...(await publish(sender, seconds)) });
    }
    const figures = roundFigures(rounds);
    printRounds(rounds);
    const measured = {
      startedAt,
      cores: machineCores(),
      seconds,
      batch: BATCH,
      partitions,
      rounds: figures.summary(),
      messagesPerSecond: figures.mean('publish', 'messagesPerSecond'),
      producerUsPerMessage: figures.mean('publish', 'producerUsPerMessage'),
      brokerUsPerMessage: figures.mean('publish', 'brokerUsPerMessage'),
      latency: figures.latency('publish'),
    };
    // What event-rows returned, when it ran first in this invocation.
    const eventRows = /** @type {Parameters<typeof ceiling>[1]} */ (earlier['event-rows']);
    const result = { ...measured, ceiling: ceiling(measured, eventRows) };
    printCeiling(result);
    return result;
  } finally {
    await producer.disconnect().catch(() => undefined);
    await admin.deleteTopics({ topics: [TOPIC] }).catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  }
}

/**
 * Batches sent back to back for `forSeconds`: messages/s and each process's CPU.
 * @param {Sender} sender
 * @param {number} forSeconds
 */
async function publish(sender, forSeconds) {
  const { producer, batches, cpu } = sender;
  /** @type {number[]} */
  const latencies = [];
  const before = cpu();
  const started = performance.now();
  const end = started + forSeconds * 1000;
  while (performance.now() < end) {
    const sent = performance.now();
    await producer.sendBatch({
      topicMessages: [{ topic: TOPIC, messages: batches[sender.turn++ % POOL] }],
    });
    latencies.push(performance.now() - sent);
  }
  const elapsed = (performance.now() - started) / 1000;
  const after = cpu();
  const messages = latencies.length * BATCH;
  return {
    name: 'publish',
    messages,
    messagesPerSecond: messages / elapsed,
    latencies,
    producerUsPerMessage: ((after.bench - before.bench) * 1000) / messages,
    brokerUsPerMessage: ((after.kafka - before.kafka) * 1000) / messages,
  };
}

/**
 * Each round's rate, latency and CPU per message.
 * @param {({ round: number } & Awaited<ReturnType<typeof publish>>)[]} rounds
 */
function printRounds(rounds) {
  console.log(
    '| round | messages/s | p50 ms | p99 ms | producer CPU µs per message | broker CPU µs per message |\n' +
      '|---:|---:|---:|---:|---:|---:|\n' +
      rounds
        .map((r) => {
          const { p50, p99 } = stats(r.latencies);
          return `| ${r.round} | ${fmt(r.messagesPerSecond, 0)} | ${fmt(p50)} | ${fmt(p99)} | ${fmt(r.producerUsPerMessage)} | ${fmt(r.brokerUsPerMessage)} |`;
        })
        .join('\n'),
  );
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
    { name: 'producer', label: 'kafkajs producer', us: publish.producerUsPerMessage },
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
 * The chart's input (chart.mjs): the budgets, each part's cost and their sums on one scale.
 * @param {{ startedAt: string, cores: number, seconds: number, batch: number,
 *   partitions: number, messagesPerSecond: number, latency: { p50: number, p99: number },
 *   ceiling: ReturnType<typeof ceiling> }} s
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
    ],
    primaryPanel: {
      title:
        'CPU per Event, µs, all cores together: one scale for every bar (green: under every budget)',
      sharedScale: true,
    },
    legend: { floor: 'budget: cores ÷ target rate', floorShare: 'not drawn here' },
  };
}
