import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import net from 'node:net';
import pg from 'pg';
import {
  ROOT_CONTEXT,
  SpanKind,
  TraceFlags,
  context,
  createTraceState,
  metrics,
  propagation,
  trace,
  type Span,
  type SpanContext,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  CompositePropagator,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
  isTracingSuppressed,
} from '@opentelemetry/core';
import { installTestMetricReader } from '@herald/telemetry/testing';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { createPool, withTransaction, type Pool } from '@herald/db';
import {
  consumeBatches,
  createKafka,
  createProducer,
  ensureTopics,
  partitionOffsets,
  type Consumer,
  type Kafka,
  type Producer,
} from '@herald/kafka';
import {
  OUTBOX_RELAYS_TABLE_SQL,
  OUTBOX_TABLE_SQL,
  shardLockKey,
  createOutboxRelay,
  deletePendingFor,
  deletePendingOfTenant,
  enqueue,
  type OutboxMessage,
  type OutboxRelayOptions,
} from '../../src/index.js';

// Real PostgreSQL (a scratch database) and real Kafka (scratch topics), both removed afterwards.
// Metrics and spans go to in-memory readers, trace context to the W3C propagator, as with the SDK.

const reader = installTestMetricReader();
const spans = new InMemorySpanExporter();
trace.setGlobalTracerProvider(
  new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }),
);
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

const adminUrl = `${process.env.HERALD_POSTGRES_URL ?? 'postgres://herald@127.0.0.1:55432'}/postgres`;
const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:59092').split(',');
const dbName = `herald_test_outbox_${process.pid}_${Date.now()}`;
const run = randomUUID();
const topics = {
  commit: `test.outbox.commit.${run}`,
  order: `test.outbox.order.${run}`,
  tombstone: `test.outbox.tombstone.${run}`,
  down: `test.outbox.down.${run}`,
  pair: `test.outbox.pair.${run}`,
  large: `test.outbox.large.${run}`,
  misc: `test.outbox.misc.${run}`,
};

interface Received {
  key: string;
  value: string | null;
  headers: Record<string, string>;
  partition: number;
  offset: string;
}

let pool: Pool;
let kafka: Kafka;
let producer: Producer;
let consumer: Consumer;
const received = new Map<string, Received[]>();
const got = (topic: string): Received[] => received.get(topic) ?? [];

const logs: { level: string; msg?: string }[] = [];
const logger = {
  warn: (_obj: object, msg?: string) => logs.push({ level: 'warn', msg }),
  info: (_obj: object, msg?: string) => logs.push({ level: 'info', msg }),
};

async function admin(sql: string) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Polls until `check` holds; fails with `what` after the timeout. */
async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function relayWith(options: Partial<OutboxRelayOptions> & { name: string }) {
  return createOutboxRelay({ pool, producer, logger, ...options });
}

/** Runs batches until one publishes nothing; returns how many were published. */
async function drain(relay: { runOnce(): Promise<number> }): Promise<number> {
  let total = 0;
  for (let n = await relay.runOnce(); n > 0; n = await relay.runOnce()) total += n;
  return total;
}

async function pendingRows(): Promise<number> {
  const { rows } = await pool.query<{ n: number }>('select count(*)::int as n from outbox');
  return rows[0]!.n;
}

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The producer, with `sent` called with each send's message count once it succeeded, and
 * `sending` with every send (the active context then) before it starts.
 */
function watchSends(
  producer: Producer,
  { sent = () => {}, sending = () => {} }: { sent?: (count: number) => void; sending?: () => void },
): Producer {
  type SendOptions = Parameters<Producer['send']>[0];
  // The promise form of the overloaded send.
  const send: (options: SendOptions) => Promise<unknown> = producer.send.bind(producer);
  producer.send = (async (options: SendOptions) => {
    sending();
    const result = await send(options);
    sent(options.messages.length);
    return result;
  }) as Producer['send'];
  return producer;
}

/** A producer whose only broker is a closed port, failing fast; counts send attempts. */
async function unreachableProducer(onSend: () => void = () => {}): Promise<Producer> {
  const deadKafka = createKafka({
    clientId: 'outbox-lib-test-dead',
    brokers: [`127.0.0.1:${await closedPort()}`],
    // Two: an idempotent producer takes fewer as "retry for ever".
    retries: 2,
  });
  return watchSends(createProducer(deadKafka), { sending: onSend });
}

interface Point {
  attributes: Record<string, unknown>;
  value: unknown;
}

/** Every data point of a metric whose attributes include `attributes`. */
async function points(name: string, attributes: Record<string, unknown>): Promise<Point[]> {
  const { resourceMetrics } = await reader.collect();
  return resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .filter((metric) => metric.descriptor.name === name)
    .flatMap((metric) => metric.dataPoints as Point[])
    .filter((p) => Object.entries(attributes).every(([k, v]) => p.attributes[k] === v));
}

async function collectMetric(name: string, outboxName: string): Promise<number | undefined> {
  const { resourceMetrics } = await reader.collect();
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      if (metric.descriptor.name !== name) continue;
      const point = (metric.dataPoints as { attributes: object; value: unknown }[]).find(
        (p) => (p.attributes as Record<string, unknown>)['outbox.name'] === outboxName,
      );
      if (point) return point.value as number;
    }
  }
  return undefined;
}

beforeAll(async () => {
  await admin(`create database ${dbName}`);
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  pool = createPool({ connectionString: url.toString(), applicationName: 'outbox-lib-test' });
  await pool.query(OUTBOX_TABLE_SQL);
  await pool.query(OUTBOX_RELAYS_TABLE_SQL);

  kafka = createKafka({ brokers, clientId: 'outbox-lib-test' });
  await ensureTopics(
    kafka,
    Object.values(topics).map((topic) => ({ topic, numPartitions: 3 })),
  );
  producer = createProducer(kafka);

  consumer = kafka.consumer({ groupId: `test-outbox-${run}`, maxWaitTime: 250 });
  const stream = await consumer.consume({
    topics: Object.values(topics),
    mode: 'committed',
    fallbackMode: 'earliest',
  });
  void consumeBatches(stream, (messages) => {
    for (const message of messages) {
      const list = received.get(message.topic) ?? [];
      list.push({
        key: message.key!,
        value: message.value,
        headers: Object.fromEntries(message.headers),
        partition: message.partition,
        offset: String(message.offset),
      });
      received.set(message.topic, list);
    }
    return Promise.resolve();
  }).catch(() => {});
}, 60_000);

afterAll(async () => {
  await consumer?.close(true);
  await producer?.close();
  if (kafka) {
    const kafkaAdmin = kafka.admin();
    await kafkaAdmin.deleteTopics({ topics: Object.values(topics) });
    await kafkaAdmin.close();
  }
  await pool?.end();
  await admin(`drop database if exists ${dbName} with (force)`);
  metrics.disable();
  trace.disable();
  propagation.disable();
  context.disable();
}, 60_000);

beforeEach(async () => {
  await pool.query('truncate outbox, outbox_relays');
  logs.length = 0;
});

describe('enqueue and the relay', () => {
  it('when a transaction rolls back, then its message is never published, and a committed one is read back with key, value and headers (its traceparent now its producer span’s)', async () => {
    const topic = topics.commit;
    await expect(
      withTransaction(pool, async (client) => {
        await enqueue(client, [{ topic, key: 'contact-1', value: { n: 'rolled back' } }]);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');

    const active = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: TraceFlags.SAMPLED,
    });
    // Key order and the \u0000 escape survive: the value is sent as the JSON text enqueued.
    const value = { z: 1, a: 'x\u0000', nested: { b: [1, 2], a: null } };
    await context.with(active, () =>
      withTransaction(pool, (client) =>
        enqueue(client, [
          {
            topic,
            key: 'contact-1',
            value,
            subjectId: randomUUID(),
            headers: { 'x-request-id': 'req-1' },
          },
        ]),
      ),
    );

    const relay = relayWith({ name: 'commit' });
    expect(await relay.runOnce()).toBe(1);
    expect(await relay.runOnce()).toBe(0);
    expect(await pendingRows()).toBe(0);

    await waitFor('the committed message', () => got(topic).length >= 1);
    // Same key, so same partition: offset 0 proves nothing was published before it.
    expect(got(topic)).toEqual([
      {
        key: 'contact-1',
        value: JSON.stringify(value),
        headers: {
          traceparent: expect.stringMatching(
            /^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/,
          ),
          'x-request-id': 'req-1',
        },
        partition: expect.any(Number),
        offset: '0',
      },
    ]);
  });

  it('when 200 messages over 3 keys are enqueued across transactions, then each key is read back in enqueue order', async () => {
    const topic = topics.order;
    const keys = ['contact-a', 'contact-b', 'contact-c'];
    const sent: OutboxMessage[] = [];
    for (let i = 0; i < 200; i += 1) {
      sent.push({ topic, key: keys[(i * 7) % 3]!, value: { seq: i } });
    }
    // Uneven chunks, each its own transaction.
    for (let start = 0, size = 1; start < sent.length; start += size, size = (size * 3) % 37) {
      const chunk = sent.slice(start, start + size);
      await withTransaction(pool, (client) => enqueue(client, chunk));
    }

    const relay = relayWith({ name: 'order', batchSize: 17, pollIntervalMs: 20 });
    relay.start();
    await waitFor('200 messages', () => got(topic).length >= 200);
    await relay.stop();

    expect(got(topic)).toHaveLength(200);
    for (const key of keys) {
      const expected = sent.filter((m) => m.key === key).map((m) => JSON.stringify(m.value));
      const actual = got(topic)
        .filter((m) => m.key === key)
        .map((m) => m.value);
      expect(actual).toEqual(expected);
    }
    expect(await pendingRows()).toBe(0);
  });

  it('when a message has a null value, then it arrives as a tombstone', async () => {
    const topic = topics.tombstone;
    await enqueue(pool, [
      { topic, key: 'contact-t', value: { name: 'Ada' } },
      { topic, key: 'contact-t', value: null },
    ]);
    expect(await drain(relayWith({ name: 'tombstone' }))).toBe(2);

    await waitFor('two messages', () => got(topic).length >= 2);
    expect(got(topic).map((m) => m.value)).toEqual(['{"name":"Ada"}', null]);
  });

  it('when Kafka is unreachable, then the rows stay pending with one warning, and a working producer later publishes them all in order', async () => {
    const topic = topics.down;
    const sent = Array.from({ length: 30 }, (_, i) => ({ topic, key: `k${i % 2}`, value: { i } }));
    await enqueue(pool, sent);

    let sendAttempts = 0;
    const dead = relayWith({
      name: 'down',
      producer: await unreachableProducer(() => (sendAttempts += 1)),
      pollIntervalMs: 10,
      maxBackoffMs: 40,
    });

    await expect(dead.runOnce()).rejects.toThrow();
    expect(await dead.stats()).toMatchObject({ pending: 30 });

    dead.start();
    await waitFor('several retries', () => sendAttempts >= 5);
    await dead.stop();
    expect(logs.filter((l) => l.level === 'warn')).toHaveLength(1);
    expect(await pendingRows()).toBe(30);

    // Kafka is back (here: a relay replica whose producer reaches it).
    const relay = relayWith({ name: 'down' });
    expect(await drain(relay)).toBe(30);
    await waitFor('30 messages', () => got(topic).length >= 30);
    for (const key of ['k0', 'k1']) {
      expect(
        got(topic)
          .filter((m) => m.key === key)
          .map((m) => m.value),
      ).toEqual(sent.filter((m) => m.key === key).map((m) => JSON.stringify(m.value)));
    }
  });

  it('when a relay recovers from failing, then it logs that once', async () => {
    await enqueue(pool, [{ topic: topics.misc, key: 'k', value: 1 }]);
    const relay = relayWith({
      name: 'recover',
      producer: await unreachableProducer(),
      pollIntervalMs: 10,
      maxBackoffMs: 20,
    });
    relay.start();
    await waitFor('a warning', () => logs.some((l) => l.level === 'warn'));
    // Once nothing is pending the relay no longer needs Kafka, so it recovers.
    await pool.query('truncate outbox, outbox_relays');
    await waitFor('recovery', () => logs.some((l) => l.msg === 'outbox relay recovered'));
    await relay.stop();
    expect(logs.filter((l) => l.level === 'info')).toHaveLength(1);
  });

  it('when two relays run on the same table at once, then every message is published exactly once', async () => {
    const topic = topics.pair;
    const sent = Array.from({ length: 300 }, (_, i) => ({
      topic,
      key: `k${i % 10}`,
      value: { i },
    }));
    await enqueue(pool, sent);

    const secondProducer = createProducer(kafka);
    const a = relayWith({ name: 'pair', batchSize: 20, pollIntervalMs: 5 });
    const b = relayWith({
      name: 'pair',
      batchSize: 20,
      pollIntervalMs: 5,
      producer: secondProducer,
    });
    a.start();
    b.start();
    await waitFor('an empty outbox', async () => (await pendingRows()) === 0);
    await Promise.all([a.stop(), b.stop()]);
    await secondProducer.close();

    await waitFor('300 messages', () => got(topic).length >= 300);
    const kafkaAdmin = kafka.admin();
    const offsets = await partitionOffsets(kafkaAdmin, [topic]);
    await kafkaAdmin.close();
    // Everything ever written to the topic: no duplicate was produced.
    expect(offsets.reduce((sum, p) => sum + Number(p.high), 0)).toBe(300);
    expect(new Set(got(topic).map((m) => m.value)).size).toBe(300);
    for (const key of ['k0', 'k7']) {
      expect(
        got(topic)
          .filter((m) => m.key === key)
          .map((m) => m.value),
      ).toEqual(sent.filter((m) => m.key === key).map((m) => JSON.stringify(m.value)));
    }
  });

  it('when another relay holds the lock, then runOnce publishes nothing until it is released', async () => {
    await enqueue(pool, [{ topic: topics.misc, key: 'k', value: { lock: true } }]);
    const relay = relayWith({ name: 'locked' });
    const holder = await pool.connect();
    try {
      await holder.query('begin');
      await holder.query('select pg_advisory_xact_lock($1::int, 0)', [shardLockKey('locked')]);
      expect(await relay.runOnce()).toBe(0);
      // A relay of another outbox (another name) is not held up.
      expect(await relayWith({ name: 'other' }).runOnce()).toBe(1);
      await enqueue(pool, [{ topic: topics.misc, key: 'k', value: { lock: 2 } }]);
      expect(await relay.runOnce()).toBe(0);
    } finally {
      await holder.query('commit');
      holder.release();
    }
    expect(await relay.runOnce()).toBe(1);
  });

  it('when stop is called while a batch is in flight, then it resolves once that batch is published and deleted', async () => {
    await enqueue(
      pool,
      Array.from({ length: 25 }, (_, i) => ({ topic: topics.misc, key: 'stop', value: { i } })),
    );
    const relay = relayWith({ name: 'stop', batchSize: 10 });
    relay.start();
    await relay.stop();
    expect(await pendingRows()).toBe(15);
    expect(await drain(relay)).toBe(15);
  });

  it('when messages together exceed the batch byte limit, then they go out in several batches, all of them', async () => {
    const topic = topics.large;
    const big = 'x'.repeat(300_000);
    await enqueue(
      pool,
      Array.from({ length: 6 }, (_, i) => ({ topic, key: 'same-partition', value: { i, big } })),
    );
    const relay = relayWith({ name: 'large' });
    // 6 x 300 kB in one partition's record batch would exceed Kafka's 1 MiB default limit.
    expect(await relay.runOnce()).toBe(2);
    expect(await drain(relay)).toBe(4);
    await waitFor('six large messages', () => got(topic).length >= 6);
    expect(got(topic).map((m) => (JSON.parse(m.value!) as { i: number }).i)).toEqual([
      0, 1, 2, 3, 4, 5,
    ]);
  });
});

describe('shards', () => {
  /** A producer of its own that counts the messages it sent: which relay published what. */
  function countingProducer(): Promise<{ producer: Producer; sent: () => number }> {
    let sent = 0;
    const counting = watchSends(createProducer(kafka), { sent: (count) => (sent += count) });
    return Promise.resolve({ producer: counting, sent: () => sent });
  }

  const relayRows = async (name: string) =>
    (
      await pool.query<{ relay_id: string; shards: number[] }>(
        'select relay_id, shards from outbox_relays where outbox = $1 order by relay_id',
        [name],
      )
    ).rows;

  it('when two relays share 8 shards, then each publishes 4 and about half the messages, each once and in order per key', async () => {
    const topic = topics.pair;
    const before = got(topic).length;
    const sent = Array.from({ length: 400 }, (_, i) => ({
      topic,
      key: `s${i % 40}`,
      value: { i },
    }));
    const [first, second] = [await countingProducer(), await countingProducer()];
    const options = { name: 'sharded', shards: 8, batchSize: 10, pollIntervalMs: 5 };
    const a = relayWith({
      ...options,
      producer: first.producer,
      relayId: 'relay-a',
      heartbeatMs: 50,
    });
    const b = relayWith({
      ...options,
      producer: second.producer,
      relayId: 'relay-b',
      heartbeatMs: 50,
    });
    a.start();
    b.start();
    try {
      await waitFor('the shards shared', () => a.shards().length === 4 && b.shards().length === 4);
      expect([...a.shards(), ...b.shards()].sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      await waitFor('the heartbeats to show the share', async () =>
        (await relayRows('sharded')).every((row) => row.shards.length === 4),
      );
      await enqueue(pool, sent);
      await waitFor('an empty outbox', async () => (await pendingRows()) === 0);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      await Promise.all([first.producer.close(), second.producer.close()]);
    }

    expect(first.sent() + second.sent()).toBe(400);
    // 40 keys hashed into 8 shards, half of them each: neither relay is idle or doing it all.
    for (const count of [first.sent(), second.sent()]) {
      expect(count).toBeGreaterThan(100);
      expect(count).toBeLessThan(300);
    }
    await waitFor('400 messages', () => got(topic).length >= before + 400);
    const arrived = got(topic).slice(before);
    expect(new Set(arrived.map((m) => m.value)).size).toBe(400);
    for (const key of ['s0', 's13', 's39']) {
      expect(arrived.filter((m) => m.key === key).map((m) => m.value)).toEqual(
        sent.filter((m) => m.key === key).map((m) => JSON.stringify(m.value)),
      );
    }
    // Both stopped: their rows are gone, so nothing waits for their lease to run out.
    expect(await relayRows('sharded')).toEqual([]);
  });

  it('when a relay stops, then the other takes its shards at its next heartbeat; when one stops beating, after the lease', async () => {
    const options = { name: 'handover', shards: 4, heartbeatMs: 50, leaseMs: 400 };
    const a = relayWith({ ...options, relayId: 'relay-a' });
    const b = relayWith({ ...options, relayId: 'relay-b' });
    a.start();
    b.start();
    await waitFor('the shards shared', () => a.shards().length === 2 && b.shards().length === 2);
    await a.stop();
    await waitFor('b alone', () => b.shards().length === 4, 2_000);

    // A relay that wrote one heartbeat and then nothing, as a killed process leaves its row.
    await pool.query(
      `insert into outbox_relays (outbox, relay_id, shard_count, seen_at)
       values ('handover', 'relay-0-killed', 4, clock_timestamp())`,
    );
    await waitFor('b sharing with it', () => b.shards().length === 2, 2_000);
    const gone = Date.now();
    await waitFor('b alone again', () => b.shards().length === 4, 2_000);
    expect(Date.now() - gone).toBeGreaterThanOrEqual(200);
    // The expired row is deleted, and the next heartbeat writes the share it works on.
    await waitFor('the row to show it', async () => {
      const rows = await relayRows('handover');
      return rows.length === 1 && rows[0]?.shards.length === 4;
    });
    await b.stop();
  });

  it('when a live relay counts the shards differently, then neither publishes, with a warning, until it is gone', async () => {
    await enqueue(pool, [{ topic: topics.misc, key: 'k', value: { disagree: true } }]);
    await pool.query(
      `insert into outbox_relays (outbox, relay_id, shard_count, seen_at)
       values ('disagree', 'relay-other', 16, clock_timestamp() + interval '1 hour')`,
    );
    const relay = relayWith({ name: 'disagree', shards: 8, heartbeatMs: 50, pollIntervalMs: 10 });
    relay.start();
    try {
      await waitFor('a warning', () =>
        logs.some((l) => l.level === 'warn' && /count the shards differently/.test(l.msg ?? '')),
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(relay.shards()).toEqual([]);
      expect(await pendingRows()).toBe(1);
      await pool.query(`delete from outbox_relays where relay_id = 'relay-other'`);
      await waitFor('the message published', async () => (await pendingRows()) === 0);
      expect(relay.shards()).toHaveLength(8);
    } finally {
      await relay.stop();
    }
  });
});

describe('enqueue', () => {
  it('when 1000 messages are enqueued in one call, then all are stored in one statement, in order', async () => {
    const queries: unknown[] = [];
    const client = await pool.connect();
    const query = client.query.bind(client);
    try {
      const counting = Object.assign(Object.create(client) as typeof client, {
        query: (...args: Parameters<typeof query>) => {
          queries.push(args[0]);
          return query(...args);
        },
      });
      const messages = Array.from({ length: 1000 }, (_, i) => ({
        topic: topics.misc,
        key: `key-${(i * 31) % 1000}`,
        value: { i },
        headers: { 'x-n': String(i) },
      }));
      await enqueue(counting, messages);
      expect(queries).toHaveLength(1);
    } finally {
      client.release();
    }
    const { rows } = await pool.query<{ key: string; value: string; headers: object }>(
      'select key, value, headers from outbox order by id',
    );
    expect(rows).toHaveLength(1000);
    expect(rows.map((r) => r.key)).toEqual(
      Array.from({ length: 1000 }, (_, i) => `key-${(i * 31) % 1000}`),
    );
    expect(rows[999]).toEqual({ key: 'key-969', value: '{"i":999}', headers: { 'x-n': '999' } });
  });

  it('when a value cannot be serialized or a header is not a string, then nothing is stored', async () => {
    await expect(
      enqueue(pool, [
        { topic: topics.misc, key: 'ok', value: 1 },
        { topic: topics.misc, key: 'bad', value: undefined },
      ]),
    ).rejects.toThrow(TypeError);
    await expect(
      enqueue(pool, [
        {
          topic: topics.misc,
          key: 'bad',
          value: 1,
          headers: { n: 1 as unknown as string },
        },
      ]),
    ).rejects.toThrow(TypeError);
    expect(await pendingRows()).toBe(0);
  });

  it('when the request came with baggage and an oversized tracestate, then its rows carry the traceparent alone', async () => {
    // A propagator that accepts baggage (OTEL_PROPAGATORS=tracecontext,baggage) reading a public
    // caller: whatever it let in must not be copied into every row.
    propagation.disable();
    propagation.setGlobalPropagator(
      new CompositePropagator({
        propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
      }),
    );
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    try {
      const incoming = propagation.extract(ROOT_CONTEXT, {
        traceparent,
        baggage: 'email=jane.doe%40example.com,plan=gold',
      });
      expect(propagation.getBaggage(incoming)).toBeDefined();
      const active = trace.setSpanContext(incoming, {
        ...trace.getSpanContext(incoming)!,
        traceState: createTraceState().set('vendor', 'x'.repeat(600)),
      });
      await context.with(active, () =>
        enqueue(pool, [
          { topic: topics.misc, key: 'a', value: 1 },
          { topic: topics.misc, key: 'b', value: 2, headers: { 'x-request-id': 'req-1' } },
        ]),
      );
    } finally {
      propagation.disable();
      propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    }
    const { rows } = await pool.query<{ headers: object }>(
      'select headers from outbox order by id',
    );
    expect(rows.map((r) => r.headers)).toEqual([
      { traceparent },
      { traceparent, 'x-request-id': 'req-1' },
    ]);
  });

  it('when deletePendingFor runs, then only that subject’s pending messages are removed', async () => {
    const erased = randomUUID();
    const kept = randomUUID();
    await enqueue(pool, [
      { topic: topics.misc, key: erased, value: { who: 'erased' }, subjectId: erased },
      { topic: topics.misc, key: kept, value: { who: 'kept' }, subjectId: kept },
      { topic: topics.misc, key: erased, value: { who: 'erased again' }, subjectId: erased },
      { topic: topics.misc, key: 'org', value: { who: 'nobody' } },
    ]);
    expect(await withTransaction(pool, (client) => deletePendingFor(client, erased))).toBe(2);
    const { rows } = await pool.query<{ value: string }>('select value from outbox order by id');
    expect(rows.map((r) => r.value)).toEqual(['{"who":"kept"}', '{"who":"nobody"}']);
    expect(await deletePendingFor(pool, erased)).toBe(0);
  });

  it('when deletePendingOfTenant runs, then only messages whose value names that Tenant go, at most the limit at a time', async () => {
    const tenant = randomUUID();
    const other = randomUUID();
    await enqueue(pool, [
      { topic: topics.misc, key: 'a', value: { tenantId: tenant, n: 1 } },
      // U+0000 in a value (no PostgreSQL JSON function reads it); other Tenants' values naming it.
      { topic: topics.misc, key: 'b', value: { tenantId: other, note: `\u0000 ${tenant}` } },
      { topic: topics.misc, key: 'c', value: { tenantId: tenant, note: '\u0000' } },
      { topic: topics.misc, key: 'd', value: { tenantId: tenant, n: 3 } },
      { topic: topics.misc, key: tenant, value: null },
      { topic: topics.misc, key: 'e', value: [tenant] },
      {
        topic: topics.misc,
        key: 'f',
        value: { tenantId: other, properties: { tenantId: tenant } },
      },
      {
        topic: topics.misc,
        key: 'g',
        value: { tenantId: other, properties: { tenantId: tenant, note: '\u0000' } },
      },
    ]);
    expect(await deletePendingOfTenant(pool, tenant, 2)).toBe(2);
    expect(await deletePendingOfTenant(pool, tenant, 2)).toBe(1);
    expect(await deletePendingOfTenant(pool, tenant, 2)).toBe(0);
    const { rows } = await pool.query<{ key: string }>(
      `select key from outbox where key in ('a', 'b', 'c', 'd', 'e', 'f', 'g', $1) order by id`,
      [tenant],
    );
    expect(rows.map((r) => r.key)).toEqual(['b', tenant, 'e', 'f', 'g']);
  });
});

describe('tracing', () => {
  const tracer = trace.getTracer('outbox-test');
  const message = (i: number) => ({ topic: topics.misc, key: 'traced', value: { i } });
  const enqueueIn = (span: Span, ...messages: OutboxMessage[]) =>
    context.with(trace.setSpan(context.active(), span), () => enqueue(pool, messages));
  /** A request its caller did not sample: no trace of it exists to link to. */
  const unsampledRequest = () =>
    trace.wrapSpanContext({
      traceId: randomBytes(16).toString('hex'),
      spanId: randomBytes(8).toString('hex'),
      traceFlags: TraceFlags.NONE,
    });

  /**
   * Publishes the whole outbox in one batch, inside a span of a poller of its own (which the
   * publish must never take as its parent), and returns the spans it recorded (the publish, and
   * the producer spans of the messages) and what the producer saw active when it sent.
   */
  async function publishTraced(name: string) {
    const sentIn: Array<{ span?: SpanContext; suppressed: boolean }> = [];
    const own = watchSends(createProducer(kafka), {
      sending: () =>
        sentIn.push({
          span: trace.getActiveSpan()?.spanContext(),
          suppressed: isTracingSuppressed(context.active()),
        }),
    });
    const relay = relayWith({ name, producer: own });
    spans.reset();
    const poller = tracer.startSpan('poller');
    const published = await context.with(trace.setSpan(context.active(), poller), async () => [
      await relay.runOnce(),
      await relay.runOnce(),
    ]);
    poller.end();
    await own.close();
    const recorded = spans.getFinishedSpans();
    return {
      published,
      sentIn,
      publish: recorded.filter((s) => s.name === 'outbox publish'),
      sends: recorded.filter((s) => s.name.startsWith('send ')),
      others: recorded.filter(
        (s) => s.name !== 'poller' && s.name !== 'outbox publish' && !s.name.startsWith('send '),
      ),
    };
  }

  /** The traceparent a span's context makes. */
  const traceparentOf = (span: { spanContext(): SpanContext }) => {
    const { traceId, spanId, traceFlags } = span.spanContext();
    return `00-${traceId}-${spanId}-0${traceFlags}`;
  };

  it('when the sampled requests of a batch are of several traces, then one root span linked to each is recorded, and none for an empty poll', async () => {
    const requestA = tracer.startSpan('request A');
    const requestB = tracer.startSpan('request B');
    await enqueueIn(requestA, message(1), message(2));
    await enqueueIn(requestB, message(3));
    await enqueueIn(unsampledRequest(), message(5));
    await enqueue(pool, [message(4)]);
    requestA.end();
    requestB.end();

    const before = got(topics.misc).length;
    const { published, sentIn, publish, sends, others } = await publishTraced('traced');

    expect(published).toEqual([5, 0]);
    expect(publish.map((s) => s.name)).toEqual(['outbox publish']);
    expect(others).toEqual([]);
    expect(publish[0]!.parentSpanContext).toBeUndefined();
    expect(publish[0]!.attributes).toEqual({
      'outbox.name': 'traced',
      'messaging.system': 'kafka',
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'send',
      'messaging.batch.message_count': 5,
      'messaging.destination.name': topics.misc,
    });
    expect(publish[0]!.links.map((l) => l.context.spanId).sort()).toEqual(
      [requestA.spanContext().spanId, requestB.spanContext().spanId].sort(),
    );
    expect(sentIn).toEqual([{ span: publish[0]!.spanContext(), suppressed: false }]);

    // A producer span for each message of a sampled request, under the publish; the record
    // carries it. The others leave with the context they were stored with.
    expect(sends).toHaveLength(3);
    for (const send of sends) {
      expect(send.name).toBe(`send ${topics.misc}`);
      expect(send.kind).toBe(SpanKind.PRODUCER);
      expect(send.parentSpanContext?.spanId).toBe(publish[0]!.spanContext().spanId);
      expect(send.attributes).toEqual({
        'messaging.system': 'kafka',
        'messaging.destination.name': topics.misc,
        'messaging.operation.type': 'send',
        'messaging.operation.name': 'send',
      });
    }
    await waitFor('the 5 messages', () => got(topics.misc).length >= before + 5);
    const records = got(topics.misc).slice(before);
    const carried = records.map((r) => r.headers.traceparent);
    expect(carried.slice(0, 3).sort()).toEqual(sends.map(traceparentOf).sort());
    expect(carried[3]).toMatch(/-00$/);
    expect(carried[4]).toBeUndefined();
  });

  it('when the sampled requests of a batch are all of one trace, then the publish is a child of the first one, linked to each, and the messages are sent inside it', async () => {
    const request = tracer.startSpan('request');
    const inRequest = tracer.startSpan(
      'later in the request',
      {},
      trace.setSpan(context.active(), request),
    );
    await enqueueIn(unsampledRequest(), message(1));
    await enqueueIn(request, message(2), message(3));
    await enqueue(pool, [message(4)]);
    await enqueueIn(inRequest, { topic: topics.pair, key: 'traced', value: { i: 5 } });
    inRequest.end();
    request.end();

    const { published, sentIn, publish, sends } = await publishTraced('one-trace');

    expect(published).toEqual([5, 0]);
    expect(sends.map((s) => s.name).sort()).toEqual(
      [`send ${topics.misc}`, `send ${topics.misc}`, `send ${topics.pair}`].sort(),
    );
    expect(publish.map((s) => s.name)).toEqual(['outbox publish']);
    const span = publish[0]!;
    expect(span.spanContext().traceId).toBe(request.spanContext().traceId);
    expect(span.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(span.links.map((l) => l.context.spanId)).toEqual([
      request.spanContext().spanId,
      inRequest.spanContext().spanId,
    ]);
    // Two topics: no single destination to name.
    expect(span.attributes).toEqual({
      'outbox.name': 'one-trace',
      'messaging.system': 'kafka',
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'send',
      'messaging.batch.message_count': 5,
    });
    expect(sentIn).toEqual([{ span: span.spanContext(), suppressed: false }]);
  });

  it('when more sampled requests of one trace than links fit come before one of another trace, then the publish is still a root span', async () => {
    const request = tracer.startSpan('request');
    const parent = trace.setSpan(context.active(), request);
    for (let i = 0; i < 130; i += 1) {
      const step = tracer.startSpan(`step ${i}`, {}, parent);
      await enqueueIn(step, message(i));
      step.end();
    }
    const other = tracer.startSpan('another request');
    await enqueueIn(other, message(130));
    other.end();
    request.end();

    const { publish } = await publishTraced('many-links');

    expect(publish.map((s) => s.name)).toEqual(['outbox publish']);
    expect(publish[0]!.parentSpanContext).toBeUndefined();
    expect(publish[0]!.links).toHaveLength(128);
  });

  it('when no request of a batch was sampled, then no span is recorded and the messages are sent with tracing suppressed', async () => {
    await enqueueIn(unsampledRequest(), message(1), message(2));
    await enqueueIn(unsampledRequest(), message(3));
    await enqueue(pool, [message(4)]);

    const { published, sentIn, publish, sends } = await publishTraced('untraced');

    expect(published).toEqual([4, 0]);
    expect(publish).toEqual([]);
    expect(sends).toEqual([]);
    expect(sentIn).toHaveLength(1);
    expect(sentIn[0]!.suppressed).toBe(true);
  });
});

describe('stats and metrics', () => {
  it('when rows are pending, then stats() and the outbox.pending and outbox.lag gauges report them, and outbox.published counts what went out', async () => {
    const relay = relayWith({ name: 'metrics', pollIntervalMs: 10 });
    expect(await relay.stats()).toEqual({ pending: 0, lagSeconds: 0 });

    await enqueue(
      pool,
      [1, 2, 3].map((i) => ({ topic: topics.misc, key: 'metrics', value: { i } })),
    );
    await pool.query(`update outbox set created_at = now() - interval '30 seconds'`);
    const stats = await relay.stats();
    expect(stats.pending).toBe(3);
    expect(stats.lagSeconds).toBeGreaterThanOrEqual(30);
    expect(stats.lagSeconds).toBeLessThan(60);

    // Another replica holds the lock, so the started relay observes without publishing.
    const holder = await pool.connect();
    await holder.query('begin');
    await holder.query('select pg_advisory_xact_lock($1::int, 0)', [shardLockKey('metrics')]);
    relay.start();
    try {
      expect(await collectMetric('outbox.pending', 'metrics')).toBe(3);
      const lag = await collectMetric('outbox.lag', 'metrics');
      expect(lag).toBeGreaterThanOrEqual(30);
    } finally {
      await holder.query('commit');
      holder.release();
    }
    await waitFor('the relay to publish', async () => (await pendingRows()) === 0);
    await relay.stop();
    expect(await collectMetric('outbox.published', 'metrics')).toBe(3);
    expect(await relay.stats()).toEqual({ pending: 0, lagSeconds: 0 });
  });
});

describe('metrics by topic', () => {
  it('when a relay names its topics, then they report 0 pending before any message, and per topic what was published and how long it waited', async () => {
    const name = 'by-topic';
    const relay = relayWith({ name, topics: [topics.misc, topics.pair], pollIntervalMs: 10 });
    relay.start();
    try {
      for (const topic of [topics.misc, topics.pair]) {
        const at = { 'outbox.name': name, 'messaging.destination.name': topic };
        expect((await points('outbox.pending', at)).map((p) => p.value)).toEqual([0]);
        expect((await points('outbox.lag', at)).map((p) => p.value)).toEqual([0]);
      }
    } finally {
      await relay.stop();
    }

    await enqueue(pool, [
      { topic: topics.misc, key: 'by-topic', value: { i: 1 } },
      { topic: topics.misc, key: 'by-topic', value: { i: 2 } },
      { topic: topics.pair, key: 'by-topic', value: { i: 3 } },
    ]);
    await pool.query(`update outbox set created_at = now() - interval '2 seconds'`);
    expect(await drain(relay)).toBe(3);

    const misc = { 'outbox.name': name, 'messaging.destination.name': topics.misc };
    const pair = { 'outbox.name': name, 'messaging.destination.name': topics.pair };
    expect((await points('outbox.published', misc)).map((p) => p.value)).toEqual([2]);
    expect((await points('outbox.published', pair)).map((p) => p.value)).toEqual([1]);
    const [lag] = await points('outbox.publish.lag', misc);
    const histogram = lag?.value as { count: number; min: number };
    expect(histogram.count).toBe(2);
    expect(histogram.min).toBeGreaterThanOrEqual(2);
    expect(histogram.min).toBeLessThan(60);
  });

  it('when Kafka cannot be reached, then outbox.publish.errors counts the failure for the batch topic as a Kafka error', async () => {
    const name = 'errors';
    const relay = createOutboxRelay({
      pool,
      producer: await unreachableProducer(),
      logger,
      name,
    });
    await enqueue(pool, [{ topic: topics.down, key: 'errors', value: { i: 1 } }]);
    try {
      await expect(relay.runOnce()).rejects.toThrow();
      const failed = await points('outbox.publish.errors', {
        'outbox.name': name,
        'messaging.destination.name': topics.down,
        'error.type': 'kafka',
      });
      expect(failed.map((p) => p.value)).toEqual([1]);
    } finally {
      await pool.query('delete from outbox where topic = $1', [topics.down]);
    }
  });
});
