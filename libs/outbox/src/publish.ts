import { withTransaction, type Pool, type PoolClient } from '@herald/db';
import type { ProducedMessage, Producer } from '@herald/kafka';
import {
  SpanStatusCode,
  batchSpanPlacement,
  context,
  propagation,
  trace,
  type Attributes,
} from '@herald/telemetry';
import {
  ROOT_CONTEXT,
  SpanKind,
  TraceFlags,
  type Context,
  type Span,
  type SpanContext,
} from '@opentelemetry/api';
import { suppressTracing, unsuppressTracing } from '@opentelemetry/core';
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

  // One send for the whole batch: the producer splits it by partition leader, keeping the rows'
  // order within each partition. It connects on its first send and again after a failed one.
  async function send(batch: readonly OutboxRow[]): Promise<void> {
    await publishSpan(batch, (headersOf) =>
      producer.send({ messages: toMessages(batch, headersOf) }),
    );
  }

  // One span per batch whose messages come from sampled requests, linked to each of them (the
  // messaging conventions' batch), and a child of the first when they are all of one trace, so
  // that a request's trace goes on through its publish. Under it, each message of a sampled
  // request gets a producer span (`send <topic>`) whose context replaces the stored traceparent
  // header, so that its consumers continue the trace from there. The messages of requests that
  // were not sampled get no span and keep the context they were stored with, so that their
  // consumers never continue another request's trace (at a production ratio nearly every batch
  // holds a sampled request).
  // A batch with no sampled request gets no span and sends with tracing suppressed: every
  // stored header goes out as enqueued.
  function publishSpan<T>(
    batch: readonly OutboxRow[],
    fn: (headersOf: (row: OutboxRow) => Record<string, string>) => Promise<T>,
  ): Promise<T> {
    const stored = (row: OutboxRow) => row.headers;
    const placement = batchSpanPlacement(sampledOrigins(batch));
    if (placement === undefined) {
      return context.with(suppressTracing(context.active()), () => fn(stored));
    }
    const unsuppressed = unsuppressTracing(context.active());
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
        if (!span.isRecording()) {
          try {
            return await context.with(suppressTracing(context.active()), () => fn(stored));
          } finally {
            span.end();
          }
        }
        const sends = producerSpans(batch, context.active());
        try {
          return await fn((row) => sends.get(row)?.headers ?? row.headers);
        } catch (err) {
          const status = { code: SpanStatusCode.ERROR, message: (err as Error).message };
          span.setStatus(status);
          for (const { span: sendSpan } of sends.values()) sendSpan.setStatus(status);
          throw err;
        } finally {
          for (const { span: sendSpan } of sends.values()) sendSpan.end();
          span.end();
        }
      },
    );
  }

  /**
   * A producer span for each message of a sampled request, a child of the publish span in `ctx`,
   * with the headers the message leaves with: the stored ones, its traceparent (and tracestate)
   * now the span's. The span names the topic, never the key.
   */
  function producerSpans(
    batch: readonly OutboxRow[],
    ctx: Context,
  ): Map<OutboxRow, { span: Span; headers: Record<string, string> }> {
    const sends = new Map<OutboxRow, { span: Span; headers: Record<string, string> }>();
    for (const row of batch) {
      const traceparent = row.headers.traceparent;
      if (traceparent === undefined || unsampled(traceparent)) continue;
      const span = tracer.startSpan(
        `send ${row.topic}`,
        {
          kind: SpanKind.PRODUCER,
          attributes: {
            'messaging.system': 'kafka',
            'messaging.destination.name': row.topic,
            'messaging.operation.type': 'send',
            'messaging.operation.name': 'send',
          },
        },
        ctx,
      );
      const headers = { ...row.headers };
      propagation.inject(trace.setSpan(ctx, span), headers);
      sends.set(row, { span, headers });
    }
    return sends;
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

/** The rows as messages, in id order (which is each partition's order). */
function toMessages(
  rows: readonly OutboxRow[],
  headersOf: (row: OutboxRow) => Record<string, string>,
): ProducedMessage[] {
  return rows.map((row) => ({
    topic: row.topic,
    key: row.key,
    value: row.value,
    headers: headersOf(row),
  }));
}

async function deleteRows(client: PoolClient, rows: readonly OutboxRow[]): Promise<void> {
  await client.query('delete from outbox where id = any($1::bigint[])', [rows.map((r) => r.id)]);
}
