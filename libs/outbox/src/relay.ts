import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from '@herald/db';
import type { Producer } from '@herald/kafka';
import {
  SpanStatusCode,
  context,
  meter,
  propagation,
  trace,
  type Attributes,
} from '@herald/telemetry';
import {
  ROOT_CONTEXT,
  type BatchObservableCallback,
  type Link,
  type ObservableGauge,
} from '@opentelemetry/api';
import { suppressTracing, unsuppressTracing } from '@opentelemetry/core';
import type { Message, TopicMessages } from 'kafkajs';

export interface OutboxLogger {
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
}

export interface OutboxRelayOptions {
  pool: Pool;
  /** An idempotent producer (`createProducer` of @herald/kafka); the relay connects it. */
  producer: Producer;
  logger: OutboxLogger;
  /**
   * Names the outbox in logs and metrics (`outbox.name`) and derives the advisory lock that lets
   * one relay publish at a time: every replica of a service must use the same name.
   */
  name: string;
  /** Most rows published per batch (one sendBatch, one transaction). Default 500. */
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
}

export interface OutboxStats {
  /** Rows not yet published. */
  pending: number;
  /** Age in seconds of the oldest pending row; 0 when none. */
  lagSeconds: number;
}

export interface OutboxRelay {
  /** Publishes in the background until `stop`. Failures are logged and retried, never thrown. */
  start(): void;
  /** Lets the batch in flight finish (published and deleted, or rolled back), then resolves. */
  stop(): Promise<void>;
  /**
   * Publishes one batch and returns how many messages it published: 0 when the outbox is empty
   * or another relay holds the lock. Rejects when Kafka or PostgreSQL fails; the rows then stay.
   */
  runOnce(): Promise<number>;
  /** Pending rows and the age of the oldest, one query (the metrics use it too). */
  stats(): Promise<OutboxStats>;
}

interface OutboxRow {
  id: string;
  topic: string;
  key: string;
  value: string | null;
  headers: Record<string, string>;
}

/** How much a message costs beside its key, value and headers (record and batch framing). */
const MESSAGE_OVERHEAD_BYTES = 64;
/** The metrics reuse one stats query for this long, however often they are observed. */
const STATS_MAX_AGE_MS = 5_000;
/** While publishing keeps failing, a warning at most this often (the first at once). */
const WARN_EVERY_MS = 60_000;

/** Links to the requests that enqueued a batch, at most this many (the SDK's default limit). */
const MAX_LINKS = 128;

const INSTRUMENTATION_NAME = '@herald/outbox';

/**
 * The relay: publishes the outbox's rows in id order and deletes them, at least once. See
 * README.md for the guarantees.
 */
export function createOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const {
    pool,
    producer,
    logger,
    name,
    batchSize = 500,
    maxBatchBytes = 768 * 1024,
    pollIntervalMs = 200,
    maxBackoffMs = 5_000,
  } = options;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new RangeError('batchSize must be a positive integer');
  }
  const lockKey = advisoryLockKey(name);
  const attributes: Attributes = { 'outbox.name': name };

  const m = meter(INSTRUMENTATION_NAME);
  const tracer = trace.getTracer(INSTRUMENTATION_NAME);
  const publishedCounter = m.createCounter('outbox.published', {
    unit: '{message}',
    description: 'Outbox messages published to Kafka (and deleted from the outbox)',
  });
  const pendingGauge = m.createObservableGauge('outbox.pending', {
    unit: '{message}',
    description: 'Outbox messages not yet published',
  });
  const lagGauge = m.createObservableGauge('outbox.lag', {
    unit: 's',
    description: 'Age of the oldest outbox message not yet published; 0 when none',
  });
  const gauges: ObservableGauge[] = [pendingGauge, lagGauge];

  let cached: { at: number; stats: Promise<OutboxStats> } | undefined;
  const observe: BatchObservableCallback = async (result) => {
    if (!cached || Date.now() - cached.at > STATS_MAX_AGE_MS) {
      const entry = { at: Date.now(), stats: stats() };
      cached = entry;
      // A failed query is not cached: the next observation tries again.
      entry.stats.catch(() => {
        if (cached === entry) cached = undefined;
      });
    }
    try {
      const { pending, lagSeconds } = await cached.stats;
      result.observe(pendingGauge, pending, attributes);
      result.observe(lagGauge, lagSeconds, attributes);
    } catch {
      // Database unreachable: no data point rather than a wrong one.
    }
  };
  let observing = false;

  async function stats(): Promise<OutboxStats> {
    const { rows } = await pool.query<{ pending: string; lag: number | null }>(
      `select count(*) as pending,
              greatest(extract(epoch from now() - min(created_at)), 0)::float8 as lag
       from outbox`,
    );
    const row = rows[0];
    return { pending: Number(row?.pending ?? 0), lagSeconds: row?.lag ?? 0 };
  }

  // The producer is connected (again) before the first send and after any failed one; connecting
  // a connected producer costs nothing.
  let producerReady = false;

  async function publishBatch(): Promise<{ published: number; more: boolean }> {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('begin');
      const lock = await client.query<{ locked: boolean }>(
        'select pg_try_advisory_xact_lock($1::bigint) as locked',
        [lockKey],
      );
      if (lock.rows[0]?.locked !== true) {
        await client.query('rollback');
        return { published: 0, more: false };
      }
      // No `for update`: the advisory lock already keeps other relays out, and row locks held
      // while Kafka is slow would make an erasure's deletePendingFor wait for Kafka.
      const { rows } = await client.query<OutboxRow>(
        'select id, topic, key, value, headers from outbox order by id limit $1',
        [batchSize],
      );
      const batch = takeWithinBytes(rows, maxBatchBytes);
      if (batch.length === 0) {
        await client.query('commit');
        return { published: 0, more: false };
      }
      await send(batch);
      await deleteRows(client, batch);
      await client.query('commit');
      publishedCounter.add(batch.length, attributes);
      return {
        published: batch.length,
        more: rows.length === batchSize || batch.length < rows.length,
      };
    } catch (err) {
      await client.query('rollback').catch((rollbackError: Error) => {
        broken = rollbackError;
      });
      throw err;
    } finally {
      // A connection whose rollback failed is destroyed rather than handed to the next caller.
      client.release(broken);
    }
  }

  async function send(batch: readonly OutboxRow[]): Promise<void> {
    try {
      if (!producerReady) {
        await producer.connect();
        producerReady = true;
      }
      await publishSpan(batch, () => producer.sendBatch({ topicMessages: toTopicMessages(batch) }));
    } catch (err) {
      producerReady = false;
      throw err;
    }
  }

  // One span per batch, linked to the requests that enqueued its messages. The kafkajs
  // instrumentation (when loaded) makes each message's producer span a child of it and replaces
  // the stored traceparent header with that span's, so consumers reach the requests through
  // these links; without the instrumentation the stored header goes out as enqueued.
  function publishSpan<T>(batch: readonly OutboxRow[], fn: () => Promise<T>): Promise<T> {
    return tracer.startActiveSpan(
      'outbox publish',
      {
        root: true,
        links: originLinks(batch),
        attributes: { ...attributes, 'messaging.batch.message_count': batch.length },
      },
      unsuppressTracing(context.active()),
      async (span) => {
        try {
          return await fn();
        } catch (err) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
          throw err;
        } finally {
          span.end();
        }
      },
    );
  }

  // Polling is not traced: an idle relay would otherwise record several database spans per poll.
  // Only a batch that is published gets a span (publishSpan).
  function pollOnce(): Promise<{ published: number; more: boolean }> {
    return context.with(suppressTracing(context.active()), publishBatch);
  }

  // Running state of start()/stop().
  let loop: Promise<void> | undefined;
  let stopping = false;
  let wake: (() => void) | undefined;

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });
  }

  async function run(): Promise<void> {
    let failures = 0;
    let failingSince = 0;
    let lastWarning = 0;
    while (!stopping) {
      let wait = pollIntervalMs;
      try {
        const { published, more } = await pollOnce();
        if (failures > 0) {
          logger.info(
            {
              outbox: name,
              failedAttempts: failures,
              downForMs: Date.now() - failingSince,
              published,
            },
            'outbox relay recovered',
          );
          failures = 0;
        }
        if (more) wait = 0;
      } catch (err) {
        if (failures === 0) failingSince = Date.now();
        failures += 1;
        if (failures === 1 || Date.now() - lastWarning >= WARN_EVERY_MS) {
          lastWarning = Date.now();
          logger.warn(
            {
              outbox: name,
              err,
              failedAttempts: failures,
              failingForMs: Date.now() - failingSince,
            },
            'outbox relay cannot publish; the messages stay in the outbox and are retried',
          );
        }
        wait = Math.min(maxBackoffMs, pollIntervalMs * 2 ** Math.min(failures - 1, 20));
      }
      if (stopping) break;
      if (wait > 0) await sleep(wait);
    }
  }

  return {
    start() {
      if (loop) return;
      stopping = false;
      if (!observing) {
        m.addBatchObservableCallback(observe, gauges);
        observing = true;
      }
      loop = run();
    },
    async stop() {
      stopping = true;
      wake?.();
      if (observing) {
        m.removeBatchObservableCallback(observe, gauges);
        observing = false;
      }
      const running = loop;
      await running;
      if (loop === running) loop = undefined;
    },
    async runOnce() {
      return (await pollOnce()).published;
    },
    stats,
  };
}

/** A 64-bit advisory lock key from the outbox's name, the same in every replica. */
export function advisoryLockKey(name: string): string {
  return createHash('sha256').update(`herald.outbox:${name}`).digest().readBigInt64BE(0).toString();
}

/** The distinct trace contexts the rows were enqueued in (enqueue stored them in the headers). */
function originLinks(rows: readonly OutboxRow[]): Link[] {
  const links = new Map<string, Link>();
  for (const row of rows) {
    if (links.size >= MAX_LINKS) break;
    const origin = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, row.headers));
    if (origin && trace.isSpanContextValid(origin)) links.set(origin.spanId, { context: origin });
  }
  return [...links.values()];
}

/** The leading rows that fit in `maxBytes`; always at least one, so a large row is not stuck. */
function takeWithinBytes(rows: readonly OutboxRow[], maxBytes: number): OutboxRow[] {
  let total = 0;
  let count = 0;
  for (const row of rows) {
    total += messageBytes(row);
    if (count > 0 && total > maxBytes) break;
    count += 1;
  }
  return rows.slice(0, count);
}

function messageBytes(row: OutboxRow): number {
  let bytes = MESSAGE_OVERHEAD_BYTES + Buffer.byteLength(row.key);
  if (row.value !== null) bytes += Buffer.byteLength(row.value);
  for (const [name, value] of Object.entries(row.headers)) {
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value);
  }
  return bytes;
}

/** One entry per topic, rows in id order within it (which is each partition's order). */
function toTopicMessages(rows: readonly OutboxRow[]): TopicMessages[] {
  const byTopic = new Map<string, Message[]>();
  for (const row of rows) {
    let messages = byTopic.get(row.topic);
    if (!messages) {
      messages = [];
      byTopic.set(row.topic, messages);
    }
    messages.push({ key: row.key, value: row.value, headers: row.headers });
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
}

async function deleteRows(client: PoolClient, rows: readonly OutboxRow[]): Promise<void> {
  await client.query('delete from outbox where id = any($1::bigint[])', [rows.map((r) => r.id)]);
}
