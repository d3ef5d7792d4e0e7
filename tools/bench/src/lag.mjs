// Publish lag and outbox depth while Events are recorded. The lag of one Event is the Kafka
// record's timestamp (set when the relay produced it) minus the Event's `receivedAt` in the
// message (libs/messages `eventRecordedMessage`; set in the recording transaction): the time
// from commit to Kafka. The outbox depth (rows the relay has not published yet, every Tenant's)
// is sampled once a second: a depth that keeps growing is a backlog the relay does not drain.
import { randomBytes } from 'node:crypto';
import { percentile } from './lib.mjs';

const TOPIC = 'herald.events.recorded';

/**
 * `"field":"value"` from a JSON text without parsing all of it (the consumer must be cheap).
 * @param {string} text
 * @param {string} field
 */
function stringField(text, field) {
  const marker = `"${field}":"`;
  const at = text.indexOf(marker);
  if (at === -1) return null;
  const start = at + marker.length;
  return text.slice(start, text.indexOf('"', start));
}

/**
 * Assigns the group's only member (this benchmark) every `every`-th partition of the topic: a
 * sample. kafkajs decodes every message it fetches (about 10 µs each), and at 50,000 Events/s
 * reading all of them would take a large share of a small machine from the services measured.
 * @param {typeof import('kafkajs').AssignerProtocol} AssignerProtocol
 * @param {number[]} partitions
 * @returns {import('kafkajs').PartitionAssigner}
 */
function sampleAssigner(AssignerProtocol, partitions) {
  const name = 'HeraldBenchSample';
  const empty = Buffer.alloc(0);
  return () => ({
    name,
    version: 1,
    assign: async ({ members }) =>
      members.map(({ memberId }, i) => ({
        memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({
          version: 1,
          assignment: i === 0 ? { [TOPIC]: partitions } : {},
          userData: empty,
        }),
      })),
    protocol: ({ topics }) => ({
      name,
      metadata: AssignerProtocol.MemberMetadata.encode({ version: 1, topics, userData: empty }),
    }),
  });
}

/**
 * A consumer of herald.events.recorded in a group of its own, starting at the newest offsets,
 * reading every `every`-th partition. Counts and times the messages whose dedupKey starts with
 * `${runId}.`; the key's next part is the measurement, so each lag lands with the measurement
 * that caused it even when the relay publishes it later. Resolves once the group is joined and
 * the first fetch has run.
 * @param {{ brokers: string, runId: string, every?: number }} options
 */
export async function startLagConsumer({ brokers, runId, every = 4 }) {
  const { AssignerProtocol, Kafka, logLevel } = (await import('kafkajs')).default;
  const kafka = new Kafka({
    clientId: 'herald-bench',
    brokers: brokers.split(','),
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  let all;
  try {
    const { topics } = await admin.fetchTopicMetadata({ topics: [TOPIC] });
    all = topics[0].partitions.map((p) => p.partitionId).sort((a, b) => a - b);
  } finally {
    await admin.disconnect();
  }
  const partitions = all.filter((p) => p % every === 0);
  const consumer = kafka.consumer({
    groupId: `herald-bench-${runId}-${randomBytes(3).toString('hex')}`,
    maxWaitTimeInMs: 250,
    partitionAssigners: [sampleAssigner(AssignerProtocol, partitions)],
  });
  /** @type {Map<string, number[]>} measurement -> ms */
  const lags = new Map();
  const prefix = `${runId}.`;
  let foreign = 0;
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: false });
  let resolveReady;
  const ready = new Promise((resolve) => (resolveReady = resolve));
  let joined = false;
  consumer.on(consumer.events.GROUP_JOIN, () => (joined = true));
  consumer.on(consumer.events.FETCH, () => joined && resolveReady());
  await consumer.run({
    eachBatchAutoResolve: true,
    eachBatch: async ({ batch }) => {
      for (const message of batch.messages) {
        if (!message.value) continue;
        const text = message.value.toString('latin1');
        const dedupKey = stringField(text, 'dedupKey');
        if (!dedupKey?.startsWith(prefix)) {
          foreign += 1;
          continue;
        }
        const measurement = dedupKey.slice(prefix.length, dedupKey.indexOf('.', prefix.length));
        const receivedAt = Date.parse(stringField(text, 'receivedAt'));
        let list = lags.get(measurement);
        if (!list) lags.set(measurement, (list = []));
        list.push(Number(message.timestamp) - receivedAt);
      }
    },
  });
  const timeout = setTimeout(() => resolveReady(), 30000);
  await ready;
  clearTimeout(timeout);
  if (!joined) throw new Error(`the lag consumer did not join its group on ${TOPIC} in 30 s`);
  return {
    /** The partitions read, of how many. */
    sample: { partitions, of: all.length },
    published: (measurement) => lags.get(measurement)?.length ?? 0,
    /**
     * p50/p99/max ms of one measurement's Events, or of all measured ones (no warm-ups).
     * @param {string} [measurement]
     */
    lag(measurement) {
      const measured = [...lags].filter(([m]) => !m.endsWith('-warmup')).map(([, v]) => v);
      const values = measurement ? (lags.get(measurement) ?? []) : measured.flat();
      const sorted = Float64Array.from(values).sort();
      return {
        published: sorted.length,
        p50: percentile(sorted, 50),
        p99: percentile(sorted, 99),
        max: sorted.length ? sorted[sorted.length - 1] : NaN,
      };
    },
    foreign: () => foreign,
    stop: () => consumer.disconnect(),
  };
}

/**
 * Samples `select count(*) from outbox` in herald_events every `everyMs` through `client`, its own.
 * @param {import('pg').Pool} client
 */
export function outboxSampler(client, everyMs = 1000) {
  /** @type {{ at: number, depth: number }[]} */
  const samples = [];
  let timer;
  let running = Promise.resolve();
  const sample = async () => {
    try {
      const { rows } = await client.query('select count(*)::int as n from outbox');
      samples.push({ at: Date.now(), depth: rows[0].n });
    } catch {
      // a restart of PostgreSQL or the schema under our feet: skip this sample
    }
  };
  return {
    async start() {
      await sample();
      timer = setInterval(() => (running = sample()), everyMs);
    },
    sampleNow: () => sample(),
    /**
     * start/max/end of the depth between two instants (ms since the epoch).
     * @param {number} from
     * @param {number} to
     */
    between(from, to) {
      const inside = samples.filter((s) => s.at >= from && s.at <= to);
      if (inside.length === 0) return { start: NaN, max: NaN, end: NaN, samples: 0 };
      return {
        start: inside[0].depth,
        max: Math.max(...inside.map((s) => s.depth)),
        end: inside[inside.length - 1].depth,
        samples: inside.length,
      };
    },
    all: () => samples,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
