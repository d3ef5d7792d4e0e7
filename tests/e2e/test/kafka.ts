// A test consumer on the stack's Kafka, as a downstream consumer (Journeys) reads it.
import { randomUUID } from 'node:crypto';
import { createKafka } from '@herald/kafka';

export const KAFKA_BROKERS = (process.env.KAFKA_BROKERS ?? '127.0.0.1:59092')
  .split(',')
  .map((b) => b.trim())
  .filter(Boolean);

export interface Published {
  key: string | null;
  /** The parsed JSON value. */
  value: Record<string, unknown>;
  partition: number;
  offset: bigint;
}

export interface TenantWatch {
  /** The messages about the watched Tenant so far, in arrival order. */
  received: Published[];
  /** Resolves once at least `count` messages arrived; rejects after `timeoutMs`. */
  waitForCount(count: number, timeoutMs?: number): Promise<Published[]>;
  stop(): Promise<void>;
}

/**
 * Reads one topic from its current end on, keeping the messages of one Tenant: a fresh consumer
 * group whose offsets are set to each partition's end before it joins, so nothing published
 * after this call is missed however long the join takes, and nothing older is read.
 */
export async function watchTenant(topic: string, tenantId: string): Promise<TenantWatch> {
  const kafka = createKafka({ brokers: KAFKA_BROKERS, clientId: 'e2e-watch' });
  const groupId = `e2e-${randomUUID()}`;
  const admin = kafka.admin();
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

  const received: Published[] = [];
  let notify = () => {};
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 250 });
  await consumer.connect();
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
      notify();
    },
  });

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
