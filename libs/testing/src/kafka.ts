// Test consumers on the stack's Kafka, as a downstream consumer (Journeys) reads it.
import { randomUUID } from 'node:crypto';
import {
  consumeBatches,
  createKafka,
  ensureTopics,
  partitionOffsets,
  setGroupOffsets,
  type ConsumedMessage,
  type Consumer,
  type ITopicConfig,
  type Kafka,
} from '@herald/kafka';

export const TEST_KAFKA_BROKERS = (process.env.KAFKA_BROKERS ?? '127.0.0.1:59092')
  .split(',')
  .map((b) => b.trim())
  .filter(Boolean);

export interface WatchOptions {
  /** The Kafka client id; default `herald-test-watch`. */
  clientId?: string;
  /** The fresh consumer group's name starts with this; default `herald-test`. */
  groupPrefix?: string;
}

export interface Published {
  key: string | null;
  /** The parsed JSON value. */
  value: Record<string, unknown>;
  partition: number;
  offset: bigint;
  /** The record's headers as text (e.g. `traceparent`); the first value of a repeated one. */
  headers: Record<string, string>;
}

export interface TenantWatch {
  /** The messages about the watched Tenant so far, in arrival order. */
  received: Published[];
  /** Resolves once at least `count` messages arrived; rejects after `timeoutMs`. */
  waitForCount(count: number, timeoutMs?: number): Promise<Published[]>;
  stop(): Promise<void>;
}

/** A client of the local stack's Kafka. */
export function testKafka(clientId: string): Kafka {
  return createKafka({ brokers: TEST_KAFKA_BROKERS, clientId });
}

const kafkaFor = (options: WatchOptions) => testKafka(options.clientId ?? 'herald-test-watch');

/**
 * Creates the topics that are missing, as a service's setup step does. Test files running at the
 * same time may race to create one: the loser's second look finds it.
 */
export async function ensureTestTopics(
  topics: readonly ITopicConfig[],
  clientId = 'herald-test-setup',
): Promise<void> {
  const kafka = testKafka(clientId);
  try {
    await ensureTopics(kafka, topics);
  } catch {
    await ensureTopics(kafka, topics);
  }
}

/**
 * Commits the group's offsets at the topics' current end, on every partition: a consumer of the
 * group started later (however long its join takes) reads exactly what was published after this.
 */
export async function setGroupOffsetsToEnd(
  kafka: Kafka,
  groupId: string,
  topics: readonly string[],
): Promise<void> {
  const admin = kafka.admin();
  try {
    const ends = await partitionOffsets(admin, topics);
    await setGroupOffsets(
      admin,
      groupId,
      ends.map(({ topic, partition, high }) => ({ topic, partition, offset: high })),
    );
  } finally {
    await admin.close();
  }
}

/**
 * A fresh consumer group whose committed offsets are the topic's current end, on every
 * partition. Kafka keeps them across a restart, so a consumer of that group started later
 * (however long its join takes) reads exactly what was published after this call.
 */
export async function markTopicEnd(topic: string, options: WatchOptions = {}): Promise<string> {
  const groupId = `${options.groupPrefix ?? 'herald-test'}-${randomUUID()}`;
  await setGroupOffsetsToEnd(kafkaFor(options), groupId, [topic]);
  return groupId;
}

/** A message's headers as an object (the first value of a repeated one). */
function headerText(message: ConsumedMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of message.headerEntries) {
    if (!(name in out) && value !== undefined) out[name] = value;
  }
  return out;
}

/**
 * Runs a member of the group on the topics from its committed offsets, handing over each batch
 * of messages and committing it after; resolves once it consumes.
 */
async function runConsumer(
  kafka: Kafka,
  groupId: string,
  topics: readonly string[],
  onMessages: (messages: ConsumedMessage[]) => void,
): Promise<Consumer> {
  const consumer = kafka.consumer({ groupId, maxWaitTime: 250, autocommit: 1_000 });
  try {
    const stream = await consumer.consume({
      topics: [...topics],
      mode: 'committed',
      fallbackMode: 'latest',
    });
    void consumeBatches(stream, (messages) => {
      onMessages(messages);
      return Promise.resolve();
    }).catch(() => {});
  } catch (err) {
    await consumer.close(true);
    throw err;
  }
  return consumer;
}

/** Runs a consumer of the group on the topic, keeping one Tenant's messages in `received`. */
async function consumeTenant(
  topic: string,
  groupId: string,
  tenantId: string,
  options: WatchOptions,
  received: Published[],
  onMessage: () => void,
): Promise<Consumer> {
  return runConsumer(kafkaFor(options), groupId, [topic], (messages) => {
    for (const message of messages) {
      if (message.value === null) continue;
      const value = JSON.parse(message.value) as Record<string, unknown>;
      if (value.tenantId !== tenantId) continue;
      received.push({
        key: message.key,
        value,
        partition: message.partition,
        offset: message.offset,
        headers: headerText(message),
      });
      onMessage();
    }
  });
}

/**
 * Reads one topic from its current end on, keeping the messages of one Tenant: nothing published
 * after this call is missed however long the join takes, and nothing older is read.
 */
export async function watchTenant(
  topic: string,
  tenantId: string,
  options: WatchOptions = {},
): Promise<TenantWatch> {
  const groupId = await markTopicEnd(topic, options);
  const received: Published[] = [];
  let notify = () => {};
  const consumer = await consumeTenant(topic, groupId, tenantId, options, received, () => notify());

  return {
    received,
    async waitForCount(count, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) {
          throw new Error(
            `${received.length} of ${count} messages for tenant ${tenantId} on ${topic} within ${timeoutMs} ms`,
          );
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 500));
          notify = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      return received;
    },
    stop: () => consumer.close(true),
  };
}

/**
 * Consumes the topic as the group marked by `markTopicEnd`, keeping one Tenant's messages, until
 * `done(received)` holds or `timeoutMs` passes; resolves with every message kept.
 */
export async function consumeUntil(
  topic: string,
  groupId: string,
  tenantId: string,
  done: (received: Published[]) => boolean,
  timeoutMs: number,
  options: WatchOptions = {},
): Promise<Published[]> {
  const received: Published[] = [];
  const consumer = await consumeTenant(topic, groupId, tenantId, options, received, () => {});
  try {
    const deadline = Date.now() + timeoutMs;
    while (!done(received) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    return received;
  } finally {
    await consumer.close(true);
  }
}

/** A message read back from a topic. */
export interface TopicMessage {
  topic: string;
  partition: number;
  key: string | null;
  /** The parsed JSON value; null for a tombstone. */
  value: unknown;
  /** The value as sent; null for a tombstone. */
  raw: string | null;
  /** The record's headers as text (e.g. `traceparent`); the first value of a repeated one. */
  headers: Record<string, string>;
}

export interface TopicWatch {
  /** Every message received so far, in arrival order. */
  received: TopicMessage[];
  /** Resolves with the first message (already received or still to come) that matches. */
  waitFor(match: (m: TopicMessage) => boolean, timeoutMs?: number): Promise<TopicMessage>;
  /** Resolves with the matching messages once at least `count` were received. */
  waitForCount(
    match: (m: TopicMessage) => boolean,
    count: number,
    timeoutMs?: number,
  ): Promise<TopicMessage[]>;
  stop(): Promise<void>;
}

/**
 * Reads the topics from their current end on, every message of every Tenant: a fresh consumer
 * group whose offsets are set to each partition's end before it starts, so nothing published
 * after this call is missed (however long the group takes to join) and nothing older is read.
 */
export async function watchTopics(
  topics: readonly string[],
  options: WatchOptions = {},
): Promise<TopicWatch> {
  const kafka = kafkaFor(options);
  const groupId = `${options.groupPrefix ?? 'herald-test'}-${randomUUID()}`;
  await setGroupOffsetsToEnd(kafka, groupId, topics);

  const received: TopicMessage[] = [];
  const waiters = new Set<() => void>();
  const consumer = await runConsumer(kafka, groupId, topics, (messages) => {
    for (const message of messages) {
      const raw = message.value;
      received.push({
        topic: message.topic,
        partition: message.partition,
        key: message.key,
        value: raw === null ? null : (JSON.parse(raw) as unknown),
        raw,
        headers: headerText(message),
      });
    }
    for (const waiter of waiters) waiter();
  });

  const waitForCount: TopicWatch['waitForCount'] = (match, count, timeoutMs = 30_000) => {
    const matching = () => received.filter(match);
    if (matching().length >= count) return Promise.resolve(matching());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(
          new Error(
            `${matching().length} of ${count} matching messages on ${topics.join(', ')} within ${timeoutMs} ms`,
          ),
        );
      }, timeoutMs);
      function waiter() {
        const found = matching();
        if (found.length < count) return;
        clearTimeout(timer);
        waiters.delete(waiter);
        resolve(found);
      }
      waiters.add(waiter);
    });
  };

  return {
    received,
    waitFor: async (match, timeoutMs = 20_000) => (await waitForCount(match, 1, timeoutMs))[0]!,
    waitForCount,
    stop: () => consumer.close(true),
  };
}
