// The producers kafka-publish prices, each idempotent with acks from all replicas and keys
// partitioned as by the Java client: kafkajs as the relay uses it, kafkajs called in the shape
// that costs least per message, Confluent's librdkafka client and @platformatic/kafka. Each
// candidate lists variants (settings); one with several is measured briefly in each and the
// cheapest is kept. A sender sends one prepared call's messages and resolves on acknowledgement.

/**
 * A message as the relay hands it to kafkajs.
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

/** Kafka's key hash, as the Java client's partitioner uses it (non-negative). */
const javaHash = (/** @type {(key: string) => number} */ murmur2) => {
  const hashes = new Map();
  return (/** @type {string} */ key) => {
    let hash = hashes.get(key);
    if (hash === undefined) {
      hash = murmur2(key) & 0x7fffffff;
      hashes.set(key, hash);
    }
    return hash;
  };
};

/**
 * The partition the Java client writes a key to.
 * @param {(key: string) => number} murmur2 the signed 32-bit hash (@herald/kafka's)
 * @param {string} key
 * @param {number} partitions
 */
export const javaPartition = (murmur2, key, partitions) => (murmur2(key) & 0x7fffffff) % partitions;

/**
 * The relay's producer (createProducer of @herald/kafka) calling sendBatch.
 * @param {{ kafka: import('kafkajs').Kafka, createProducer: (k: import('kafkajs').Kafka) => import('kafkajs').Producer, topic: string }} ctx
 * @returns {(variant: Variant) => Promise<Sender>}
 */
function openKafkajs({ kafka, createProducer, topic }) {
  return async () => {
    const producer = createProducer(kafka);
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
 * @platformatic/kafka's Producer. Its default partitioner hashes keys as unsigned integers,
 * which differs from the Java client unless the partition count is a power of two; its
 * `compatibilityPartitioner` is the Java client's, and so is @herald/kafka's murmur2 as passed
 * here (a variant each).
 * @param {{ module: any, brokers: string[], topic: string, murmur2: (key: string) => number }} ctx
 * @returns {(variant: Variant) => Promise<Sender>}
 */
function openPlatformatic({ module, brokers, topic, murmur2 }) {
  const { Producer, ProduceAcks, stringSerializers, compatibilityPartitioner } = module;
  return async (variant) => {
    const hash = javaHash(murmur2);
    const partitioner =
      variant.options?.partitioner === 'herald'
        ? (/** @type {{ key: string }} */ message) => hash(message.key)
        : compatibilityPartitioner;
    const producer = new Producer({
      clientId: 'herald-bench',
      bootstrapBrokers: brokers,
      idempotent: true,
      acks: ProduceAcks.ALL,
      autocreateTopics: false,
      serializers: stringSerializers,
      partitioner,
    });
    /** @param {BenchMessage[]} messages */
    const withTopic = (messages) => messages.map((m) => ({ topic, ...m }));
    return {
      prepare: (messages) => ({ messages: withTopic(messages) }),
      send: (payload) => producer.send(payload),
      partitionOf: async (message) =>
        (await producer.send({ messages: withTopic([message]) })).offsets[0].partition,
      close: () => producer.close(),
    };
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
 * The four candidates, in the order their rounds alternate; one whose client is not installed
 * has no `open` and says why.
 * @param {object} ctx
 * @param {import('kafkajs').Kafka} ctx.kafka
 * @param {(k: import('kafkajs').Kafka) => import('kafkajs').Producer} ctx.createProducer
 * @param {string} ctx.kafkajsVersion
 * @param {Record<'confluent' | 'platformatic', import('./kafka-clients.mjs').LoadedClient>} ctx.clients
 * @param {string[]} ctx.brokers
 * @param {(key: string) => number} ctx.murmur2
 * @param {(name: string) => string} ctx.topicOf each candidate's topic
 * @returns {Candidate[]}
 */
export function kafkaCandidates({
  kafka,
  createProducer,
  kafkajsVersion,
  clients,
  brokers,
  murmur2,
  topicOf,
}) {
  const { confluent, platformatic } = clients;
  /**
   * @param {import('./kafka-clients.mjs').LoadedClient} client
   * @param {(ctx: any) => (variant: Variant) => Promise<Sender>} opener
   * @param {string} name
   */
  const installed = (client, opener, name) =>
    client.module
      ? { open: opener({ module: client.module, brokers, topic: topicOf(name), murmur2 }) }
      : { reason: client.reason };
  const librdkafka = confluent.module ? `, librdkafka ${confluent.module.librdkafkaVersion}` : '';
  return [
    {
      name: 'kafkajs',
      label: 'kafkajs today',
      version: kafkajsVersion,
      variants: [
        { ...RELAY_CALL, settings: 'the relay: 1,000 messages per sendBatch, 1 in flight' },
      ],
      open: openKafkajs({ kafka, createProducer, topic: topicOf('kafkajs') }),
    },
    {
      name: 'kafkajs-tuned',
      label: 'kafkajs tuned',
      version: kafkajsVersion,
      variants: KAFKAJS_TUNED,
      open: openKafkajs({ kafka, createProducer, topic: topicOf('kafkajs-tuned') }),
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
      label: '@platformatic/kafka',
      version: platformatic.version,
      installSeconds: platformatic.installSeconds,
      variants: [
        ['compatibilityPartitioner', 'library'],
        ["@herald/kafka's murmur2", 'herald'],
      ].map(([text, partitioner]) => ({
        ...RELAY_CALL,
        settings: `1,000 messages per send, 1 in flight, ${text}`,
        options: { partitioner },
      })),
      ...installed(platformatic, openPlatformatic, 'platformatic'),
    },
  ];
}
