import type { Pool } from '@herald/db';
import { meter, type Attributes } from '@herald/telemetry';
import type { BatchObservableCallback, ObservableGauge } from '@opentelemetry/api';

export interface OutboxStats {
  /** Rows not yet published. */
  pending: number;
  /** Age in seconds of the oldest pending row; 0 when none. */
  lagSeconds: number;
}

/** Pending rows and the age of the oldest, in one query. */
export async function outboxStats(pool: Pool): Promise<OutboxStats> {
  const { rows } = await pool.query<{ pending: string; lag: number | null }>(
    `select count(*) as pending,
            greatest(extract(epoch from now() - min(created_at)), 0)::float8 as lag
     from outbox`,
  );
  const row = rows[0];
  return { pending: Number(row?.pending ?? 0), lagSeconds: row?.lag ?? 0 };
}

/**
 * Age in seconds of the oldest pending row, 0 when none, without counting the rows: the first row
 * by id, one index probe, cheap enough to read several times a second.
 */
export async function oldestPendingSeconds(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ lag: number }>(
    `select coalesce((select extract(epoch from clock_timestamp() - created_at)
                      from outbox order by id limit 1), 0)::float8 as lag`,
  );
  return Math.max(0, rows[0]?.lag ?? 0);
}

/** The same, for each topic that has pending rows. */
export async function outboxStatsByTopic(pool: Pool): Promise<Map<string, OutboxStats>> {
  const { rows } = await pool.query<{ topic: string; pending: string; lag: number | null }>(
    `select topic, count(*) as pending,
            greatest(extract(epoch from now() - min(created_at)), 0)::float8 as lag
     from outbox group by topic`,
  );
  return new Map(
    rows.map((row) => [row.topic, { pending: Number(row.pending), lagSeconds: row.lag ?? 0 }]),
  );
}

/** What one published batch held of one topic. */
export interface PublishedTopic {
  topic: string;
  count: number;
  /** How long each of its messages waited in the outbox, enqueue to publish, in seconds. */
  waitedSeconds: readonly number[];
}

/** Why a poll failed: Kafka refused or did not answer the send, or PostgreSQL failed. */
export type PublishFailure = { kind: 'kafka'; topics: readonly string[] } | { kind: 'database' };

export interface RelayMetrics {
  /** Counts messages published (and deleted from the outbox), and how long they waited. */
  published(topics: readonly PublishedTopic[]): void;
  /** Counts a failed poll: once per topic of the batch when Kafka failed, once when PostgreSQL did. */
  failed(failure: PublishFailure): void;
  /** Starts reporting the pending and lag gauges; idempotent. */
  observe(): void;
  /** Stops reporting them; idempotent. */
  stopObserving(): void;
}

/** The metrics reuse one stats query for this long, however often they are observed. */
const STATS_MAX_AGE_MS = 5_000;

/** Seconds: from a message that went out at once to one that waited through a Kafka outage. */
const LAG_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900];

/** The attribute naming a topic, as the semantic conventions name a messaging destination. */
const TOPIC = 'messaging.destination.name';

/**
 * The outbox's metrics, each with the outbox's name (`outbox.name`) and, but for database
 * failures, the topic (`messaging.destination.name`):
 *   outbox.published      counter    messages published and deleted
 *   outbox.publish.errors counter    failed polls (`error.type`: kafka or database)
 *   outbox.publish.lag    histogram  how long each published message waited, enqueue to publish
 *   outbox.pending        gauge      rows not yet published
 *   outbox.lag            gauge      age of the oldest row not yet published; 0 when none
 *   outbox.relay.shards   gauge      shards this relay publishes (no topic): its share
 * A topic once seen keeps reporting 0 pending rather than vanishing once it is caught up.
 */
export function createRelayMetrics(
  instrumentationName: string,
  attributes: Attributes,
  statsByTopic: () => Promise<Map<string, OutboxStats>>,
  knownTopics: readonly string[] = [],
  shardsHeld: () => number = () => 1,
): RelayMetrics {
  const m = meter(instrumentationName);
  const publishedCounter = m.createCounter('outbox.published', {
    unit: '{message}',
    description: 'Outbox messages published to Kafka (and deleted from the outbox)',
  });
  const errorCounter = m.createCounter('outbox.publish.errors', {
    unit: '{error}',
    description:
      'Outbox polls that failed and left their rows for the next (error.type: kafka or database)',
  });
  const lagHistogram = m.createHistogram('outbox.publish.lag', {
    unit: 's',
    description: 'How long each published message waited in the outbox, from enqueue to publish',
    advice: { explicitBucketBoundaries: LAG_BUCKETS },
  });
  const pendingGauge = m.createObservableGauge('outbox.pending', {
    unit: '{message}',
    description: 'Outbox messages not yet published',
  });
  const lagGauge = m.createObservableGauge('outbox.lag', {
    unit: 's',
    description: 'Age of the oldest outbox message not yet published; 0 when none',
  });
  const shardsGauge = m.createObservableGauge('outbox.relay.shards', {
    unit: '{shard}',
    description: 'Outbox shards this relay publishes, its share among the live relays',
  });
  const gauges: ObservableGauge[] = [pendingGauge, lagGauge, shardsGauge];
  const seenTopics = new Set<string>(knownTopics);
  // The error series exist from the start at 0, so a rate over them reads 0 rather than nothing.
  errorCounter.add(0, { ...attributes, 'error.type': 'database' });
  for (const topic of knownTopics) {
    errorCounter.add(0, { ...attributes, [TOPIC]: topic, 'error.type': 'kafka' });
  }

  let cached: { at: number; stats: Promise<Map<string, OutboxStats>> } | undefined;
  const observe: BatchObservableCallback = async (result) => {
    result.observe(shardsGauge, shardsHeld(), attributes);
    if (!cached || Date.now() - cached.at > STATS_MAX_AGE_MS) {
      const entry = { at: Date.now(), stats: statsByTopic() };
      cached = entry;
      // A failed query is not cached: the next observation tries again.
      entry.stats.catch(() => {
        if (cached === entry) cached = undefined;
      });
    }
    try {
      const byTopic = await cached.stats;
      for (const topic of byTopic.keys()) seenTopics.add(topic);
      for (const topic of seenTopics) {
        const { pending, lagSeconds } = byTopic.get(topic) ?? { pending: 0, lagSeconds: 0 };
        const topicAttributes = { ...attributes, [TOPIC]: topic };
        result.observe(pendingGauge, pending, topicAttributes);
        result.observe(lagGauge, lagSeconds, topicAttributes);
      }
    } catch {
      // Database unreachable: no data point rather than a wrong one.
    }
  };
  let observing = false;

  return {
    published(topics) {
      for (const { topic, count, waitedSeconds } of topics) {
        seenTopics.add(topic);
        const topicAttributes = { ...attributes, [TOPIC]: topic };
        publishedCounter.add(count, topicAttributes);
        for (const seconds of waitedSeconds) lagHistogram.record(seconds, topicAttributes);
      }
    },
    failed(failure) {
      if (failure.kind === 'database') {
        errorCounter.add(1, { ...attributes, 'error.type': 'database' });
        return;
      }
      for (const topic of failure.topics) {
        errorCounter.add(1, { ...attributes, [TOPIC]: topic, 'error.type': 'kafka' });
      }
    },
    observe() {
      if (observing) return;
      m.addBatchObservableCallback(observe, gauges);
      observing = true;
    },
    stopObserving() {
      if (!observing) return;
      m.removeBatchObservableCallback(observe, gauges);
      observing = false;
    },
  };
}
