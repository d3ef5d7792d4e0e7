import {
  Kafka,
  logLevel,
  type Admin,
  type LogEntry,
  type Producer,
  type ITopicConfig,
} from 'kafkajs';

export type { Consumer, Producer, Kafka } from 'kafkajs';

interface Logger {
  error(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
}

export interface KafkaOptions {
  /** Every broker of the cluster, e.g. ['kafka-0:9092', 'kafka-1:9092']. */
  brokers: readonly string[];
  clientId: string;
  logger?: Logger;
}

/** A kafkajs client whose logs go to the service's structured logger. */
export function createKafka(options: KafkaOptions): Kafka {
  const { logger } = options;
  return new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    connectionTimeout: 3_000,
    requestTimeout: 10_000,
    retry: { initialRetryTime: 200, retries: 8 },
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ level, log, namespace }: LogEntry) => {
        if (!logger) return;
        const { message, ...extra } = log;
        const entry = { ...extra, namespace };
        if (level <= logLevel.ERROR) logger.error(entry, message);
        else if (level === logLevel.WARN) logger.warn(entry, message);
        else if (level === logLevel.INFO) logger.info(entry, message);
        else logger.debug(entry, message);
      },
  });
}

/**
 * An idempotent producer: a retried send is written once per partition, in order. Topics
 * are never created by producing to them.
 */
export function createProducer(kafka: Kafka): Producer {
  return kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
}

/**
 * Creates the topics that are missing (existing ones are left as they are) and waits until
 * every partition has a leader. Right after a create, a broker can still answer "unknown
 * topic" for a moment (seen on a fresh KRaft node), so that wait polls instead of trusting
 * kafkajs's own, which retries only "leader not available".
 */
export async function ensureTopics(
  kafka: Kafka,
  topics: readonly ITopicConfig[],
  timeoutMs = 30_000,
): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t.topic));
    if (missing.length > 0) {
      try {
        await admin.createTopics({ topics: [...missing], waitForLeaders: false });
      } catch (err) {
        // Another process created one of them at the same moment: fine.
        if ((err as { type?: string }).type !== 'TOPIC_ALREADY_EXISTS') throw err;
      }
    }
    await waitForLeaders(
      admin,
      topics.map((t) => t.topic),
      timeoutMs,
    );
    return missing.map((t) => t.topic);
  } finally {
    await admin.disconnect();
  }
}

async function waitForLeaders(admin: Admin, topics: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const { topics: metadata } = await admin.fetchTopicMetadata({ topics });
      if (
        metadata.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))
      )
        return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
    if (Date.now() > deadline)
      throw new Error(`Kafka topics have no leaders after ${timeoutMs} ms: ${topics.join(', ')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
