import { withTransaction, type Pool, type PoolClient } from '@herald/db';
import type { Producer } from '@herald/kafka';
import {
  SpanStatusCode,
  batchSpanPlacement,
  context,
  keepOwnTraceContext,
  propagation,
  trace,
  withSampledMessages,
  type Attributes,
} from '@herald/telemetry';
import { ROOT_CONTEXT, TraceFlags, type SpanContext } from '@opentelemetry/api';
import { suppressTracing, unsuppressTracing } from '@opentelemetry/core';
import type { Message, TopicMessages } from 'kafkajs';
import type { PublishFailure, PublishedTopic } from './relay-metrics.js';
import { shardOfSql } from './shards.js';

interface OutboxRow {
  id: string;
  topic: string;
  key: string;
  value: string | null;
  headers: Record<string, string>;
  /** How long it had waited when it was read, in seconds (PostgreSQL's clock: no skew). */
  age: number;
}

/** What one poll did: how many messages it published, and whether more are waiting. */
export interface PollResult {
  published: number;
  more: boolean;
}

export interface BatchPublisherOptions {
  pool: Pool;
  producer: Producer;
  /** The outbox's advisory lock space: a batch locks (lockKey, shard) for each shard it reads. */
  lockKey: number;
  shardCount: number;
  /** The shards this relay publishes now (its share among the live relays). */
  shards: () => readonly number[];
  batchSize: number;
  maxBatchBytes: number;
  /** On every span: the outbox's name. */
  attributes: Attributes;
  /** Called after a batch was published and its rows deleted (committed), topic by topic. */
  onPublished: (topics: PublishedTopic[]) => void;
  /** Called when a poll fails (and rejects): Kafka with the batch's topics, or PostgreSQL. */
  onFailed?: (failure: PublishFailure) => void;
}

/** How much a message costs beside its key, value and headers (record and batch framing). */
const MESSAGE_OVERHEAD_BYTES = 64;

/**
 * One poll of the outbox: under the advisory lock, in one transaction, the oldest rows that fit
 * one batch are sent to Kafka and then deleted. Rejects when Kafka or PostgreSQL fails; the rows
 * then stay for the next poll.
 */
export function createBatchPublisher(
  options: BatchPublisherOptions,
  instrumentationName: string,
): () => Promise<PollResult> {
  const { pool, producer, lockKey, shardCount, shards } = options;
  const { batchSize, maxBatchBytes, attributes, onPublished, onFailed } = options;
  const tracer = trace.getTracer(instrumentationName);

  // The producer is connected (again) before the first send and after any failed one; connecting
  // a connected producer costs nothing.
  let producerReady = false;

  // One transaction: the rows are deleted only when Kafka took them; any failure rolls back and
  // leaves them for the next poll. It reads only the shards whose lock it got: a shard another
  // relay is publishing (it thinks the shard its own, or has not yet let go of it) is skipped.
  /** The batch being sent to Kafka, while it is. */
  let sending: readonly OutboxRow[] | undefined;

  async function publishBatch(): Promise<PollResult> {
    const mine = shards();
    if (mine.length === 0) return { published: 0, more: false };
    let readAt = 0;
    let published: readonly OutboxRow[] = [];
    const result = await withTransaction(pool, async (client) => {
      // Its own statement, before the read: the read's snapshot then sees every row that the
      // relay which held a lock before deleted (committing is what let go of the lock).
      const lock = await client.query<{ locked: number[] | null }>(
        `select array_agg(shard) as locked from unnest($2::int[]) as shard
         where pg_try_advisory_xact_lock($1::int, shard)`,
        [lockKey, mine],
      );
      const locked = lock.rows[0]?.locked ?? [];
      if (locked.length === 0) return { published: 0, more: false };
      // No `for update`: the shard locks already keep other relays out, and row locks held
      // while Kafka is slow would make an erasure's deletePendingFor wait for Kafka.
      const { rows } = await client.query<OutboxRow>(
        `select id, topic, key, value, headers,
                greatest(extract(epoch from clock_timestamp() - created_at), 0)::float8 as age
         from outbox
         where ${shardOfSql('key', '$2::int')} = any($3::int[])
         order by id limit $1`,
        [batchSize, shardCount, locked],
      );
      readAt = performance.now();
      const batch = takeWithinBytes(rows, maxBatchBytes);
      if (batch.length === 0) return { published: 0, more: false };
      sending = batch;
      await send(batch);
      sending = undefined;
      await deleteRows(client, batch);
      published = batch;
      return {
        published: batch.length,
        more: rows.length === batchSize || batch.length < rows.length,
      };
    });
    if (result.published > 0) onPublished(byTopic(published, (performance.now() - readAt) / 1000));
    return result;
  }

  // A poll that fails while its batch is being sent failed in Kafka; any other in PostgreSQL.
  async function publishOrCount(): Promise<PollResult> {
    sending = undefined;
    try {
      return await publishBatch();
    } catch (err) {
      // Set by publishBatch while it sends (the compiler cannot see it change across the await).
      const unsent = sending as readonly OutboxRow[] | undefined;
      onFailed?.(
        unsent
          ? { kind: 'kafka', topics: [...new Set(unsent.map((row) => row.topic))] }
          : { kind: 'database' },
      );
      throw err;
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

  // One span per batch whose messages come from sampled requests, linked to each of them (the
  // messaging conventions' batch), and a child of the first when they are all of one trace, so
  // that a request's trace goes on through its publish. The kafkajs instrumentation (when
  // loaded) makes each message's producer span a child of it and replaces the stored traceparent
  // header with that span's, except on the messages of requests that were not sampled: those
  // keep the context they were stored with, so that their consumers never continue another
  // request's trace, and Herald's parent-based sampler records no producer span for them (at a
  // production ratio nearly every batch holds a sampled request). Without the instrumentation
  // the stored header goes out as enqueued.
  // A batch with no sampled request gets no span and sends with tracing suppressed: its
  // messages' producer spans would be recorded nowhere, and building one per message was a
  // tenth of the relay's CPU.
  function publishSpan<T>(batch: readonly OutboxRow[], fn: () => Promise<T>): Promise<T> {
    const placement = batchSpanPlacement(sampledOrigins(batch));
    if (placement === undefined) return context.with(suppressTracing(context.active()), fn);
    const sampled: OutboxRow[] = [];
    for (const row of batch) {
      const traceparent = row.headers.traceparent;
      if (traceparent === undefined || unsampled(traceparent)) keepOwnTraceContext(row.headers);
      else sampled.push(row);
    }
    const unsuppressed = withSampledMessages(unsuppressTracing(context.active()), sampled);
    const { links, parent } = placement;
    return tracer.startActiveSpan(
      'outbox publish',
      {
        root: parent === undefined,
        links,
        attributes: publishAttributes(attributes, batch),
      },
      parent ? trace.setSpanContext(unsuppressed, parent) : unsuppressed,
      async (span) => {
        try {
          if (!span.isRecording()) return await context.with(suppressTracing(context.active()), fn);
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
  return () => context.with(suppressTracing(context.active()), publishOrCount);
}

/** The published rows by topic, each with how long it waited (its age when read, plus since). */
function byTopic(rows: readonly OutboxRow[], sinceReadSeconds: number): PublishedTopic[] {
  const topics = new Map<string, number[]>();
  for (const row of rows) {
    let waited = topics.get(row.topic);
    if (!waited) {
      waited = [];
      topics.set(row.topic, waited);
    }
    waited.push(row.age + sinceReadSeconds);
  }
  return [...topics].map(([topic, waitedSeconds]) => ({
    topic,
    count: waitedSeconds.length,
    waitedSeconds,
  }));
}

/** The publish span's attributes (messaging conventions): the batch, and its topic if one. */
function publishAttributes(outbox: Attributes, rows: readonly OutboxRow[]): Attributes {
  const topic = rows[0]!.topic;
  return {
    ...outbox,
    'messaging.system': 'kafka',
    'messaging.operation.type': 'send',
    'messaging.operation.name': 'send',
    'messaging.batch.message_count': rows.length,
    ...(rows.every((row) => row.topic === topic) ? { 'messaging.destination.name': topic } : {}),
  };
}

/**
 * A version-00 traceparent (the only one enqueue writes) whose flags say unsampled: no need to
 * parse it. The sampled flag is the low bit of the last hex digit.
 */
function unsampled(traceparent: string): boolean {
  if (traceparent.length !== 55) return false;
  const digit = traceparent.charCodeAt(54);
  return ((digit <= 57 ? digit - 48 : (digit | 32) - 87) & 1) === 0;
}

/**
 * The distinct sampled trace contexts the rows were enqueued in (enqueue stored them in the
 * headers), in row order. A request that was not sampled has no trace anywhere to link to: under
 * load at a production ratio that is most rows, so those are skipped before any parsing.
 */
function sampledOrigins(rows: readonly OutboxRow[]): SpanContext[] {
  const origins: SpanContext[] = [];
  // Rows of one request share their headers: each distinct traceparent is parsed once.
  let seen: Set<string> | undefined;
  for (const row of rows) {
    const traceparent = row.headers.traceparent;
    if (traceparent === undefined || unsampled(traceparent) || seen?.has(traceparent)) continue;
    (seen ??= new Set()).add(traceparent);
    const origin = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, row.headers));
    if (origin && trace.isSpanContextValid(origin) && origin.traceFlags & TraceFlags.SAMPLED) {
      origins.push(origin);
    }
  }
  return origins;
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
