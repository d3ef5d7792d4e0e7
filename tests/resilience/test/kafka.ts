// A test consumer on the stack's Kafka in two steps, so that it can span an outage: mark where
// the topic ends while Kafka is up, then read from that mark on once it is back.
import { randomUUID } from 'node:crypto';
import { createKafka } from '@herald/kafka';

const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:59092')
  .split(',')
  .map((b) => b.trim())
  .filter(Boolean);

const kafka = () => createKafka({ brokers, clientId: 'resilience-test' });

export interface Published {
  key: string | null;
  value: Record<string, unknown>;
  partition: number;
  offset: bigint;
}

/**
 * A fresh consumer group whose committed offsets are the topic's current end, on every
 * partition. Kafka keeps them across a restart, so a consumer of that group started later
 * reads exactly what was published after this call.
 */
export async function markTopicEnd(topic: string): Promise<string> {
  const groupId = `resilience-${randomUUID()}`;
  const admin = kafka().admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    await admin.setOffsets({
      groupId,
      topic,
      partitions: offsets.map((o) => ({ partition: o.partition, offset: o.high })),
    });
  } finally {
    await admin.disconnect();
  }
  return groupId;
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
): Promise<Published[]> {
  const received: Published[] = [];
  const consumer = kafka().consumer({ groupId, maxWaitTimeInMs: 250 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic] });
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        if (message.value === null) return;
        const value = JSON.parse(message.value.toString('utf8')) as Record<string, unknown>;
        if (value.tenantId !== tenantId) return;
        received.push({
          key: message.key === null ? null : message.key.toString('utf8'),
          value,
          partition,
          offset: BigInt(message.offset),
        });
      },
    });
    const deadline = Date.now() + timeoutMs;
    while (!done(received) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    return received;
  } finally {
    await consumer.disconnect();
  }
}
