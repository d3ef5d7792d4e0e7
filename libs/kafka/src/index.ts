import { subscribe } from 'node:diagnostics_channel';
import type { EventEmitter } from 'node:events';
import type { ConnectionOptions } from 'node:tls';
import { metrics, type Counter } from '@opentelemetry/api';
import {
  Admin,
  Consumer as ConsumerClient,
  Producer as ProducerClient,
  stringSerializer,
  type BaseOptions,
  type ConsumeBaseOptions,
  type GroupOptions,
  type Message,
  type MessagesStream,
  type MessageToProduce,
  type SASLOptions,
} from '@platformatic/kafka';
import type { KafkaSasl } from './connection.js';
import { keyHashPartitioner } from './partitioner.js';

export { Admin } from '@platformatic/kafka';
export {
  compactedTopicConfig,
  ensureTopics,
  MIN_CLEANABLE_DIRTY_RATIO,
  retainedTopicConfig,
  withTopicConfig,
  type EnsuredTopics,
  type ITopicConfig,
  type ReconciledSetting,
  type TopicConfig,
} from './topics.js';
export { keyHashPartitioner, murmur2, type KeyPartitioner } from './partitioner.js';
export {
  kafkaConnection,
  kafkaEnv,
  KAFKA_SASL_MECHANISMS,
  type KafkaConfig,
  type KafkaConnection,
  type KafkaSasl,
  type KafkaSaslMechanism,
} from './connection.js';
export { consumeBatches } from './batches.js';
export { groupLag, partitionOffsets, setGroupOffsets, type PartitionOffsets } from './offsets.js';

/** Herald's producer: string keys and headers, a string value or null (a tombstone). */
export type Producer = ProducerClient<string, string | null, string, string>;
/** A message as Herald's producer takes it (each names its topic). */
export type ProducedMessage = MessageToProduce<string, string | null, string, string>;
/** Herald's consumer: keys, values and headers as text; a missing key or value is null. */
export type Consumer = ConsumerClient<string | null, string | null, string, string>;
/** A message as Herald's consumers receive it. */
export type ConsumedMessage = Message<string | null, string | null, string, string>;
/** The stream of messages a consumer's `consume` resolves with. */
export type ConsumedStream = MessagesStream<string | null, string | null, string, string>;

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
  /**
   * Attempts after a failed one, for every operation. Default 8 (about 20 s of backoff). The
   * idempotent producer takes 0 or 1 as "retry for ever".
   */
  retries?: number;
}

/** What a consumer group's member may set; the connection comes from its Kafka. */
export type ConsumerSettings = { groupId: string } & Pick<
  GroupOptions,
  'sessionTimeout' | 'rebalanceTimeout' | 'heartbeatInterval'
> &
  Pick<
    ConsumeBaseOptions<string | null, string | null, string, string>,
    | 'autocommit'
    | 'maxWaitTime'
    | 'minBytes'
    | 'maxBytes'
    | 'maxBytesPerPartition'
    | 'highWaterMark'
  >;

/**
 * One place that builds every client of a process from the same connection: producers,
 * consumers and admin clients of @platformatic/kafka, each counted in `kafka.client.errors`.
 */
export interface Kafka {
  readonly clientId: string;
  /** An idempotent producer (see createProducer); it connects on its first send. */
  producer(): Producer;
  /** A member of a consumer group; it joins on its first `consume`. */
  consumer(settings: ConsumerSettings): Consumer;
  /** An admin client; it connects on its first call. Close it after use. */
  admin(): Admin;
}

/** Longest wait between two attempts of an operation. */
const MAX_RETRY_DELAY_MS = 5_000;

/**
 * 200 ms, doubling, at most 5 s: a send or connect that began while the broker was down tries
 * again within seconds of its return, instead of much later with an outbox relay's batch held
 * open meanwhile.
 */
const retryDelay = (_client: unknown, _operation: string, attempt: number) =>
  Math.min(MAX_RETRY_DELAY_MS, 200 * 2 ** Math.max(0, attempt - 1));

const SASL_MECHANISMS = {
  plain: 'PLAIN',
  'scram-sha-256': 'SCRAM-SHA-256',
  'scram-sha-512': 'SCRAM-SHA-512',
} as const;

/** The client's options from Herald's: brokers, timeouts, retries, TLS and SASL. */
function baseOptions(options: KafkaOptions): BaseOptions {
  const { ssl, sasl } = options;
  const tls = ssl === true ? {} : ssl === false ? undefined : ssl;
  const saslOptions: SASLOptions | undefined = sasl && {
    mechanism: SASL_MECHANISMS[sasl.mechanism],
    username: sasl.username,
    password: sasl.password,
  };
  return {
    clientId: options.clientId,
    bootstrapBrokers: [...options.brokers],
    connectTimeout: 3_000,
    requestTimeout: 10_000,
    retries: options.retries ?? 8,
    retryDelay,
    // TLS verifies the broker's certificate against the host it dials (Node's default), and
    // names that host in SNI, as managed offerings that share an address need.
    ...(tls ? { tls, tlsServerName: true } : {}),
    ...(saslOptions ? { sasl: saslOptions } : {}),
  };
}

/**
 * How much one fetch may bring: 10 MiB, 1 MiB of each partition (kafkajs's limits). The client's
 * own default is 50 MiB for a fetch and for each partition: a consumer far behind then decodes
 * a whole fetch in one go, holding the event loop (a relay's heartbeats among it) and its memory.
 */
const FETCH_LIMITS = { maxBytes: 10 * 1024 * 1024, maxBytesPerPartition: 1024 * 1024 };

/** Values and keys as UTF-8 text; null (a tombstone's value) stays null. */
const nullableString = (data?: string | null) =>
  data == null ? undefined : stringSerializer(data);
const serializers = {
  key: stringSerializer,
  value: nullableString,
  headerKey: stringSerializer,
  headerValue: stringSerializer,
};
const text = (data?: Buffer) => (data === undefined ? undefined : data.toString('utf8'));
const nullableText = (data?: Buffer) => (data === undefined ? null : data.toString('utf8'));
const deserializers = {
  key: nullableText,
  value: nullableText,
  headerKey: text,
  headerValue: text,
};

/**
 * A factory of clients whose failures are counted in `kafka.client.errors` and logged to the
 * service's structured logger, by the part that failed (`namespace`): `Connection` (a broker
 * refused, unreachable or dropped), `Producer` (a send that failed after its retries),
 * `Consumer` (a fetch, join, heartbeat or commit), `Admin` and `Metadata`.
 */
export function createKafka(options: KafkaOptions): Kafka {
  const base = baseOptions(options);
  const clientErrors = metrics.getMeter('@herald/kafka').createCounter('kafka.client.errors', {
    unit: '{error}',
    description: 'Failures the Kafka client reported (attribute namespace: the part that failed)',
  });
  // The parts that report a broker's failures, there from the start at 0: a rate over them reads
  // 0 rather than nothing. Others appear when they first fail.
  for (const namespace of ['Connection', 'Producer', 'Consumer']) {
    clientErrors.add(0, { namespace });
  }
  const sink = { counter: clientErrors, logger: options.logger };
  return {
    clientId: options.clientId,
    producer: () =>
      trackErrors<Producer>(
        new ProducerClient({
          ...base,
          idempotent: true,
          autocreateTopics: false,
          partitioner: keyHashPartitioner(),
          serializers,
        }),
        sink,
      ),
    consumer: (settings) =>
      trackErrors<Consumer>(
        new ConsumerClient({ ...base, ...FETCH_LIMITS, ...settings, deserializers }),
        sink,
      ),
    admin: () => trackErrors(new Admin(base), sink),
  };
}

/**
 * An idempotent producer: a retried send is written once per partition, in order (one request in
 * flight per broker, acknowledged by every in-sync replica). Topics are never created by
 * producing to them. Keys are partitioned as by the Java client. It connects on its first send;
 * `close()` it at shutdown.
 */
export function createProducer(kafka: Kafka): Producer {
  return kafka.producer();
}

interface ErrorSink {
  counter: Counter;
  logger: Logger | undefined;
}

/** Each client's counter and logger, for the diagnostics channels' error events. */
const sinks = new WeakMap<object, ErrorSink>();

/** The channels whose failed operations are counted, with the namespace each counts under. */
const FAILING_CHANNELS: Record<string, string> = {
  'plt:kafka:producer:sends': 'Producer',
  'plt:kafka:producer:initIdempotent': 'Producer',
  'plt:kafka:consumer:group': 'Consumer',
  'plt:kafka:consumer:heartbeat': 'Consumer',
  'plt:kafka:consumer:fetches': 'Consumer',
  'plt:kafka:consumer:commits': 'Consumer',
  'plt:kafka:consumer:offsets': 'Consumer',
  'plt:kafka:admin:topics': 'Admin',
  'plt:kafka:admin:configs': 'Admin',
  'plt:kafka:admin:offsets': 'Admin',
  'plt:kafka:admin:consumerGroupOffsets': 'Admin',
  'plt:kafka:admin:groups': 'Admin',
  'plt:kafka:base:metadata': 'Metadata',
};

let subscribed = false;

/**
 * Counts the failures @platformatic/kafka reports: the operations its diagnostics channels trace
 * (their `error` event, once per operation, after its retries) and every failed connection to a
 * broker (its `client:broker:failed` event, once per attempt). Channels are process-wide: only
 * the clients made here are counted.
 */
function trackErrors<T extends object>(client: T, sink: ErrorSink): T {
  if (!subscribed) {
    subscribed = true;
    for (const [name, namespace] of Object.entries(FAILING_CHANNELS)) {
      subscribe(`tracing:${name}:error`, (message) => {
        const {
          client: source,
          operation,
          error,
        } = message as {
          client?: object;
          operation?: string;
          error?: Error;
        };
        const target = source && sinks.get(source);
        if (target) report(target, namespace, { operation, err: error });
      });
    }
  }
  sinks.set(client, sink);
  // Every client emits it (its type names it on each client class separately).
  (client as unknown as EventEmitter).on(
    'client:broker:failed',
    ({ broker }: { broker: { host: string; port: number } }) =>
      report(sink, 'Connection', { broker: `${broker.host}:${broker.port}` }),
  );
  return client;
}

function report(sink: ErrorSink, namespace: string, entry: Record<string, unknown>): void {
  sink.counter.add(1, { namespace });
  const err = entry.err as Error | undefined;
  sink.logger?.error(
    { ...entry, namespace },
    err?.message ?? `Kafka ${namespace.toLowerCase()} failed`,
  );
}
