import type { ConnectionOptions } from 'node:tls';
import { metrics } from '@opentelemetry/api';
import { Kafka, logLevel, type LogEntry, type Producer } from 'kafkajs';
import type { KafkaSasl } from './connection.js';
import { keyHashPartitioner } from './partitioner.js';

export type { Consumer, Producer, Kafka, ITopicConfig } from 'kafkajs';
export {
  compactedTopicConfig,
  ensureTopics,
  MIN_CLEANABLE_DIRTY_RATIO,
  retainedTopicConfig,
  withTopicConfig,
  type EnsuredTopics,
  type ReconciledSetting,
  type TopicConfig,
} from './topics.js';
export { keyHashPartitioner, murmur2 } from './partitioner.js';
export {
  kafkaConnection,
  kafkaEnv,
  KAFKA_SASL_MECHANISMS,
  type KafkaConfig,
  type KafkaConnection,
  type KafkaSasl,
  type KafkaSaslMechanism,
} from './connection.js';

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
  /** TLS to the brokers: true for Node's trusted CAs, or options such as a PEM `ca`. */
  ssl?: boolean | ConnectionOptions;
  /** A SASL user (PLAIN or SCRAM), for brokers that ask for one. */
  sasl?: KafkaSasl;
}

/**
 * A kafkajs client whose logs go to the service's structured logger, and whose errors (each
 * error kafkajs logs: a broker unreachable, a request failed or timed out, a crashed consumer)
 * are counted in `kafka.client.errors`, by the kafkajs part that logged it (`namespace`, e.g.
 * Connection, BrokerPool, Producer, Consumer).
 */
export function createKafka(options: KafkaOptions): Kafka {
  const { logger } = options;
  const clientErrors = metrics.getMeter('@herald/kafka').createCounter('kafka.client.errors', {
    unit: '{error}',
    description: 'Errors the Kafka client logged (attribute namespace: the kafkajs part)',
  });
  // The parts that log a broker's failures, there from the start at 0: a rate over them reads 0
  // rather than nothing. Others appear when they first log an error.
  for (const namespace of ['Connection', 'BrokerPool', 'Producer', 'Consumer']) {
    clientErrors.add(0, { namespace });
  }
  return new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    ...(options.ssl === undefined ? {} : { ssl: options.ssl }),
    ...(options.sasl === undefined ? {} : { sasl: options.sasl }),
    connectionTimeout: 3_000,
    requestTimeout: 10_000,
    // At most 5 s between two attempts (kafkajs's default is 30 s): a send or connect that
    // began while the broker was down tries again within seconds of its return, instead of up
    // to half a minute later with an outbox relay's batch held open meanwhile.
    retry: { initialRetryTime: 200, retries: 8, maxRetryTime: 5_000 },
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ level, log, namespace }: LogEntry) => {
        if (level <= logLevel.ERROR) clientErrors.add(1, { namespace: namespace || 'kafkajs' });
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
 * are never created by producing to them. Keys are partitioned as by the Java client.
 */
export function createProducer(kafka: Kafka): Producer {
  return kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner: keyHashPartitioner,
  });
}
