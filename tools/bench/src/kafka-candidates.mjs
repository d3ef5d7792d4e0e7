// The producers kafka-publish prices, each idempotent with acks from all replicas and keys
// partitioned as by the Java client: the relay's (@herald/kafka's, on @platformatic/kafka with
// Herald's murmur2), kafkajs as the relay used it before and in the shape that costs it least
// per message, Confluent's librdkafka client and @platformatic/kafka with its own
// compatibilityPartitioner. Each candidate lists variants (settings); one with several is
// measured briefly in each and the cheapest is kept. A sender sends one prepared call's messages
// and resolves on acknowledgement.

/**
 * A message as the relay hands it to its producer (with the topic added).
 * @typedef {{ key: string, value: string, headers: Record<string, string> }} BenchMessage
 */
/**
 * One way of running a candidate: the calls it makes and its producer's settings.
 * @typedef {object} Variant
 * @property {number} messagesPerSend messages in one send call
 * @property {number} inFlight send calls awaited concurrently
 * @property {string} settings what a reader needs to know, printed beside the figures
 * @property {Record<string, unknown>} [options] the candidate's own producer options
 */
/**
 * An open producer of one variant.
 * @typedef {object} Sender
 * @property {(messages: BenchMessage[]) => unknown} prepare one call's payload, built beforehand
 * @property {(payload: any) => Promise<unknown>} send resolves once the broker acknowledged all
 * @property {(message: BenchMessage) => Promise<number>} partitionOf the partition one message,
 *   sent alone, was written to
 * @property {() => Promise<void>} close
 */
/**
 * @typedef {object} Candidate
 * @property {string} name
 * @property {string} label
 * @property {string} version the client's version (and librdkafka's)
 * @property {Variant[]} variants
 * @property {(variant: Variant) => Promise<Sender>} [open] absent when not installed
 * @property {string} [reason] why it is not installed
 * @property {number | null} [installSeconds] this run's install time
 */

/**
 * The partition the Java client writes a key to.
 * @param {(key: string) => number} murmur2 the signed 32-bit hash (@herald/kafka's)
 * @param {string} key
 * @param {number} partitions
 */
export const javaPartition = (murmur2, key, partitions) => (murmur2(key) & 0x7fffffff) % partitions;

/**
 * A sender over a @platformatic/kafka producer (the relay's, or one made here): each message gets
 * the topic, and a message's partition is read from the offsets its send returns.
 * @param {any} producer
 * @param {string} topic
 * @returns {Sender}
 */
function platformaticSender(producer, topic) {
  /** @param {BenchMessage[]} messages */
  const withTopic = (messages) => messages.map((m) => ({ topic, ...m }));
  return {
    prepare: (messages) => ({ messages: withTopic(messages) }),
    send: (payload) => producer.send(payload),
    partitionOf: async (message) =>
      (await producer.send({ messages: withTopic([message]) })).offsets[0].partition,
    close: () => producer.close(),
  };
}

/**
 * The relay's producer (createProducer of @herald/kafka) sending one call's messages.
 * @param {{ producer: () => any, topic: string }} ctx
 * @returns {(variant: Variant) => Promise<Sender>}
 */
function openRelay({ producer: make, topic }) {
  return () => {
    const producer = make();
    return Promise.resolve(platformaticSender(producer, topic));
  };
}

/**
 * kafkajs as the relay used it: idempotent, one request in flight, no topic created by a send,
 * the default partitioner (the Java client's), its retries at most 5 s apart.
 * @param {{ module: any, brokers: string[], topic: string }} ctx
 * @returns {(variant: Variant) => Promise<Sender>}
 */
function openKafkajs({ module, brokers, topic }) {
  const { Kafka, Partitioners, logLevel } = module;
  return async () => {
    const kafka = new Kafka({
      clientId: 'herald-bench',
      brokers,
      connectionTimeout: 3_000,
      requestTimeout: 10_000,
      retry: { initialRetryTime: 200, retries: 8, maxRetryTime: 5_000 },
      logLevel: logLevel.ERROR,
    });
    const producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await producer.connect();
    return {
      prepare: (messages) => ({ topicMessages: [{ topic, messages }] }),
      send: (payload) => producer.sendBatch(payload),
      partitionOf: async (message) =>
        (await producer.send({ topic, messages: [message] }))[0].partition,
      close: () => producer.disconnect(),
    };
  };
}

/**
 * Confluent's client through its KafkaJS-compatible API. Its send() rewrites the messages it is
 * given (value to a Buffer, headers to librdkafka's form), so each call gets fresh objects, as
 * the relay's would be.
 * @param {{ module: any, brokers: string[], topic: string }} ctx
 * @returns {(variant: Variant) => Promise<Sender>}
 */
function openConfluent({ module, brokers, topic }) {
  const { KafkaJS } = module;
  return async (variant) => {
    const kafka = new KafkaJS.Kafka({
      kafkaJS: { brokers, clientId: 'herald-bench', logLevel: KafkaJS.logLevel.ERROR },
    });
    const producer = kafka.producer({
      kafkaJS: { idempotent: true, acks: -1, allowAutoTopicCreation: false },
      // The Java client's partitioner (its KafkaJS API sets it too).
      partitioner: 'murmur2_random',
      ...variant.options,
    });
    await producer.connect();
    /** @param {BenchMessage[]} messages */
    const fresh = (messages) =>
      messages.map((m) => ({ key: m.key, value: m.value, headers: m.headers }));
    return {
      prepare: (messages) => messages,
      send: (messages) => producer.send({ topic, messages: fresh(messages) }),
      partitionOf: async (message) =>
        (await producer.send({ topic, messages: fresh([message]) }))[0].partition,
      close: () => producer.disconnect(),
    };
  };
}

/**
 * @platformatic/kafka's Producer with its own `compatibilityPartitioner` (the Java client's hash,
 * computed for every message; its default partitioner hashes keys unsigned, which differs from
 * the Java client unless the partition count is a power of two). The relay runs the same client
 * with Herald's murmur2 (32-bit integer arithmetic, for every message).
 * @param {{ module: any, brokers: string[], topic: string }} ctx
 * @returns {(variant: Variant) => Promise<Sender>}
 */
function openPlatformatic({ module, brokers, topic }) {
  const { Producer, ProduceAcks, stringSerializers, compatibilityPartitioner } = module;
  return () => {
    const producer = new Producer({
      clientId: 'herald-bench',
      bootstrapBrokers: brokers,
      idempotent: true,
      acks: ProduceAcks.ALL,
      autocreateTopics: false,
      serializers: stringSerializers,
      partitioner: compatibilityPartitioner,
    });
    return Promise.resolve(platformaticSender(producer, topic));
  };
}

/** The relay's call: one 1,000-message call at a time. */
const RELAY_CALL = { messagesPerSend: 1000, inFlight: 1 };

/**
 * The shapes of kafkajs's calls tried, the relay's among them. Its idempotent producer holds a
 * lock per broker around each produce request (eosManager.acquireBrokerLock), so one request is
 * in flight per broker whatever maxInFlightRequests says: concurrent calls only overlap the
 * client's own work (and a retried call may then land after the next one, which the relay's
 * order per key forbids). Its producer has no other setting that saves work per message.
 */
const KAFKAJS_TUNED = [
  { messagesPerSend: 1000, inFlight: 1 },
  { messagesPerSend: 1000, inFlight: 2 },
  { messagesPerSend: 2000, inFlight: 1 },
  { messagesPerSend: 5000, inFlight: 1 },
  { messagesPerSend: 10000, inFlight: 1 },
].map((v) => ({
  ...v,
  settings: `${v.messagesPerSend.toLocaleString('en-US')} messages per sendBatch, ${v.inFlight} in flight`,
}));

/**
 * The five candidates, in the order their rounds alternate; one whose client is not installed
 * has no `open` and says why.
 * @param {object} ctx
 * @param {() => any} ctx.relayProducer a new producer of the relay's (createProducer)
 * @param {string} ctx.relayVersion the relay's client and its version
 * @param {Record<'kafkajs' | 'confluent' | 'platformatic', import('./kafka-clients.mjs').LoadedClient>} ctx.clients
 * @param {string[]} ctx.brokers
 * @param {(name: string) => string} ctx.topicOf each candidate's topic
 * @returns {Candidate[]}
 */
export function kafkaCandidates({ relayProducer, relayVersion, clients, brokers, topicOf }) {
  const { kafkajs, confluent, platformatic } = clients;
  /**
   * @param {import('./kafka-clients.mjs').LoadedClient} client
   * @param {(ctx: any) => (variant: Variant) => Promise<Sender>} opener
   * @param {string} name
   */
  const installed = (client, opener, name) =>
    client.module
      ? { open: opener({ module: client.module, brokers, topic: topicOf(name) }) }
      : { reason: client.reason };
  const librdkafka = confluent.module ? `, librdkafka ${confluent.module.librdkafkaVersion}` : '';
  return [
    {
      name: 'relay',
      label: 'the relay today',
      version: relayVersion,
      variants: [
        {
          ...RELAY_CALL,
          settings: "the relay: 1,000 messages per send, 1 in flight, Herald's murmur2",
        },
      ],
      open: openRelay({ producer: relayProducer, topic: topicOf('relay') }),
    },
    {
      name: 'kafkajs',
      label: 'kafkajs as the relay used it',
      version: kafkajs.version,
      installSeconds: kafkajs.installSeconds,
      variants: [{ ...RELAY_CALL, settings: '1,000 messages per sendBatch, 1 in flight' }],
      ...installed(kafkajs, openKafkajs, 'kafkajs'),
    },
    {
      name: 'kafkajs-tuned',
      label: 'kafkajs tuned',
      version: kafkajs.version,
      variants: KAFKAJS_TUNED,
      ...installed(kafkajs, openKafkajs, 'kafkajs-tuned'),
    },
    {
      name: 'confluent',
      label: '@confluentinc/kafka-javascript',
      version: `${confluent.version}${librdkafka}`,
      installSeconds: confluent.installSeconds,
      // Each call's messages are all queued at once: linger only delays the last request.
      variants: [1, 5].map((linger) => ({
        ...RELAY_CALL,
        settings: `1,000 messages per send, 1 in flight, linger.ms ${linger}`,
        options: { 'linger.ms': linger },
      })),
      ...installed(confluent, openConfluent, 'confluent'),
    },
    {
      name: 'platformatic',
      label: '@platformatic/kafka, compatibilityPartitioner',
      version: platformatic.version,
      installSeconds: platformatic.installSeconds,
      variants: [{ ...RELAY_CALL, settings: '1,000 messages per send, 1 in flight' }],
      ...installed(platformatic, openPlatformatic, 'platformatic'),
    },
  ];
}
