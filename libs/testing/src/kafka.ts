// A test consumer on the stack's Kafka, as a downstream consumer (Journeys) reads it.
import { randomUUID } from 'node:crypto';
import { createKafka, type Consumer, type Kafka } from '@herald/kafka';

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

const kafkaFor = (options: WatchOptions) =>
  createKafka({ brokers: TEST_KAFKA_BROKERS, clientId: options.clientId ?? 'herald-test-watch' });

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
  await admin.connect();
  try {
    for (const topic of topics) {
      const offsets = await admin.fetchTopicOffsets(topic);
      await admin.setOffsets({
        groupId,
        topic,
        partitions: offsets.map((o) => ({ partition: o.partition, offset: o.high })),
      });
    }
  } finally {
    await admin.disconnect();
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

/** kafkajs's IHeaders. */
type RecordHeaders = Record<string, Buffer | string | Array<Buffer | string> | undefined>;

function headerText(headers: RecordHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) out[name] = first.toString();
  }
  return out;
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
  const consumer = kafkaFor(options).consumer({ groupId, maxWaitTimeInMs: 250 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic] });
    await consumer.run({
      eachMessage: ({ partition, message }) => {
        if (message.value === null) return Promise.resolve();
        const value = JSON.parse(message.value.toString('utf8')) as Record<string, unknown>;
        if (value.tenantId !== tenantId) return Promise.resolve();
        received.push({
          key: message.key === null ? null : message.key.toString('utf8'),
          value,
          partition,
          offset: BigInt(message.offset),
          headers: headerText(message.headers),
        });
        onMessage();
        return Promise.resolve();
      },
    });
  } catch (err) {
    await consumer.disconnect();
    throw err;
  }
  return consumer;
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
    stop: () => consumer.disconnect(),
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
    await consumer.disconnect();
  }
}
