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
 * sample. Decoding every message costs the consumer CPU, and at 50,000 Events/s reading all of
 * them would take a large share of a small machine from the services measured.
 * @param {number[]} partitions
 * @returns {import('@platformatic/kafka').GroupPartitionsAssigner}
 */
function sampleAssigner(partitions) {
  return (_current, members) =>
    [...members.keys()].map((memberId, i) => ({
      memberId,
      assignments: new Map(i === 0 ? [[TOPIC, { topic: TOPIC, partitions }]] : []),
    }));
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
  const { consumeBatches, createKafka } = await import('@herald/kafka');
  const kafka = createKafka({ clientId: 'herald-bench', brokers: brokers.split(',') });
  const admin = kafka.admin();
  let all;
  try {
    const { topics } = await admin.metadata({ topics: [TOPIC] });
    all = Array.from({ length: topics.get(TOPIC)?.partitionsCount ?? 0 }, (_, i) => i);
  } finally {
    await admin.close();
  }
  const partitions = all.filter((p) => p % every === 0);
  const consumer = kafka.consumer({
    groupId: `herald-bench-${runId}-${randomBytes(3).toString('hex')}`,
    maxWaitTime: 250,
    autocommit: false,
  });
  /** @type {Map<string, number[]>} measurement -> ms */
  const lags = new Map();
  const prefix = `${runId}.`;
  let foreign = 0;
  const stream = await consumer.consume({
    topics: [TOPIC],
    mode: 'latest',
    partitionAssigner: sampleAssigner(partitions),
  });
  const ready = new Promise((resolve) => {
    const timeout = setTimeout(() => resolve(false), 30000);
    stream.once('fetch', () => {
      clearTimeout(timeout);
      resolve(true);
    });
  });
  void consumeBatches(stream, (batch) => {
    for (const message of batch) {
      const text = message.value;
      if (!text) continue;
      const dedupKey = stringField(text, 'dedupKey');
      if (!dedupKey?.startsWith(prefix)) {
        foreign += 1;
        continue;
      }
      const measurement = dedupKey.slice(prefix.length, dedupKey.indexOf('.', prefix.length));
      const receivedAt = Date.parse(stringField(text, 'receivedAt') ?? '');
      let list = lags.get(measurement);
      if (!list) lags.set(measurement, (list = []));
      list.push(Number(message.timestamp) - receivedAt);
    }
    return Promise.resolve();
  }).catch(() => {});
  if (!(await ready)) {
    await consumer.close(true);
    throw new Error(`the lag consumer did not join its group on ${TOPIC} in 30 s`);
  }
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
    stop: () => consumer.close(true),
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
