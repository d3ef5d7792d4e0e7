import { createHash } from 'node:crypto';
import type { Pool } from '@herald/db';
import type { Producer } from '@herald/kafka';
import { createBatchPublisher } from './publish.js';
import { createRelayLoop } from './relay-loop.js';
import {
  createRelayMetrics,
  outboxStats,
  outboxStatsByTopic,
  type OutboxStats,
} from './relay-metrics.js';
import { MAX_OUTBOX_SHARDS, createShardMembership, newRelayId } from './shards.js';
import { createOutboxVacuum } from './vacuum.js';

export type { OutboxStats };

export interface OutboxLogger {
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
}

export interface OutboxRelayOptions {
  pool: Pool;
  /** An idempotent producer (`createProducer` of @herald/kafka); it connects on its first send. */
  producer: Producer;
  logger: OutboxLogger;
  /**
   * Names the outbox in logs and metrics (`outbox.name`) and derives the advisory locks that let
   * one relay at a time publish a shard: every replica of a service must use the same name.
   */
  name: string;
  /**
   * How many shards the rows fall into by key (1 to MAX_OUTBOX_SHARDS); the live relays share
   * them, so up to this many replicas publish at once, and more wait. Every replica must count
   * the same: a relay publishes nothing while a live one counts differently. Default 1.
   */
  shards?: number;
  /** Tells this relay apart in `outbox_relays`. Default: host, process id and a random tail. */
  relayId?: string;
  /** How often the relay writes its heartbeat and shares the shards anew. Default 1 s. */
  heartbeatMs?: number;
  /** A relay not heard from for this long loses its shards to the others. Default 3 s. */
  leaseMs?: number;
  /**
   * The topics its rows go to: their pending and lag gauges read 0 while they are caught up,
   * rather than being absent until a first message. Others are reported once seen.
   */
  topics?: readonly string[];
  /**
   * Most rows published per batch (one sendBatch, one transaction). Default 1,000: the relay
   * publishes one batch at a time, so under a burst its throughput is rows per round trip.
   */
  batchSize?: number;
  /**
   * Most bytes (keys, values, headers and a per-message allowance) published per batch. Kafka
   * refuses a partition's record batch above the topic's max.message.bytes (1 MiB by default),
   * so a batch of large messages is cut short and the rest follows at once. Default 768 KiB.
   */
  maxBatchBytes?: number;
  /** Wait between polls when the outbox is caught up. Default 200 ms. */
  pollIntervalMs?: number;
  /** Longest wait between retries while Kafka or PostgreSQL fails. Default 5 s. */
  maxBackoffMs?: number;
  /**
   * The relay vacuums the outbox (in the background, one vacuum at a time) each time it has
   * deleted this many rows since the last, so that the table holds about that many dead rows at
   * most instead of the minute of them autovacuum lets pile up. Default 20,000; 0 leaves it to
   * autovacuum. Needs a database user that owns the table or the database (else it logs once).
   */
  vacuumAfterRows?: number;
}

export interface OutboxRelay {
  /** Publishes in the background until `stop`. Failures are logged and retried, never thrown. */
  start(): void;
  /** Lets the batch in flight finish (published and deleted, or rolled back), then resolves. */
  stop(): Promise<void>;
  /**
   * Publishes one batch and returns how many messages it published: 0 when the outbox is empty
   * or other relays hold this relay's shards. Rejects when Kafka or PostgreSQL fails; the rows
   * then stay. Before the relay's first heartbeat it writes one, to learn its shards.
   */
  runOnce(): Promise<number>;
  /** The shards this relay publishes now, its share among the live relays. */
  shards(): readonly number[];
  /** Pending rows and the age of the oldest, one query (the metrics use it too). */
  stats(): Promise<OutboxStats>;
}

const INSTRUMENTATION_NAME = '@herald/outbox';

/**
 * The relay: publishes the outbox's rows in id order and deletes them, at least once. See
 * README.md for the guarantees. The parts: the publish step (publish.ts), the polling loop
 * (relay-loop.ts) and the metrics (relay-metrics.ts).
 */
export function createOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const {
    pool,
    producer,
    logger,
    name,
    batchSize = 1000,
    maxBatchBytes = 768 * 1024,
    pollIntervalMs = 200,
    maxBackoffMs = 5_000,
    vacuumAfterRows = 20_000,
    shards: shardCount = 1,
    relayId = newRelayId(),
    heartbeatMs = 1_000,
    leaseMs = 3_000,
  } = options;
  if (!Number.isInteger(shardCount) || shardCount < 1 || shardCount > MAX_OUTBOX_SHARDS) {
    throw new RangeError(`shards must be an integer from 1 to ${MAX_OUTBOX_SHARDS}`);
  }
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new RangeError('batchSize must be a positive integer');
  }
  if (!Number.isInteger(vacuumAfterRows) || vacuumAfterRows < 0) {
    throw new RangeError('vacuumAfterRows must be an integer of 0 or more');
  }
  const attributes = { 'outbox.name': name };
  const vacuum = createOutboxVacuum({ pool, logger, name, afterRows: vacuumAfterRows });
  const stats = () => outboxStats(pool);
  const membership = createShardMembership({
    pool,
    logger,
    name,
    relayId,
    shardCount,
    heartbeatMs,
    leaseMs,
  });
  const metrics = createRelayMetrics(
    INSTRUMENTATION_NAME,
    attributes,
    () => outboxStatsByTopic(pool),
    options.topics ?? [],
    () => membership.shards().length,
  );
  const publish = createBatchPublisher(
    {
      pool,
      producer,
      lockKey: shardLockKey(name),
      shardCount,
      shards: () => membership.shards(),
      batchSize,
      maxBatchBytes,
      attributes,
      onPublished: (topics) => {
        metrics.published(topics);
        vacuum.deleted(topics.reduce((rows, topic) => rows + topic.count, 0));
      },
      onFailed: (failure) => metrics.failed(failure),
    },
    INSTRUMENTATION_NAME,
  );
  // The first poll after a start (or of runOnce) writes the heartbeat itself, so that it knows its
  // share at once; a failed heartbeat fails the poll like a failed batch, and is retried so.
  const poll = async () => {
    if (!membership.known()) await membership.beat();
    return publish();
  };
  const loop = createRelayLoop({ poll, logger, name, pollIntervalMs, maxBackoffMs });

  return {
    start() {
      if (!loop.start()) return;
      membership.start();
      metrics.observe();
    },
    async stop() {
      const stopped = loop.stop();
      metrics.stopObserving();
      await stopped;
      // After the last batch: its shards go to the others at their next heartbeat.
      await membership.stop();
      // A vacuum under way holds a pool connection: it ends before the pool does.
      await vacuum.idle();
    },
    async runOnce() {
      return (await poll()).published;
    },
    shards: () => membership.shards(),
    stats,
  };
}

/**
 * The first half of the outbox's shard locks, from its name, the same in every replica: a batch
 * holds `pg_try_advisory_xact_lock(shardLockKey(name), shard)` for each shard it reads.
 */
export function shardLockKey(name: string): number {
  return createHash('sha256').update(`herald.outbox:${name}`).digest().readInt32BE(0);
}
