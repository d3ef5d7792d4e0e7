import type { PartitionerContext } from '@platformatic/kafka';

const M = 0x5bd1e995;
const SEED = 0x9747b28c;

/**
 * Kafka's murmur2 of a key (the Java client's `Utils.murmur2`), as a signed 32-bit integer, in
 * 32-bit integer arithmetic (kafkajs computed it with 64-bit integer objects: a tenth of a relay's
 * CPU went to hashing keys that way).
 */
export function murmur2(key: string | Buffer): number {
  const data = typeof key === 'string' ? Buffer.from(key) : key;
  const length = data.length;
  let h = SEED ^ length;
  const tail = length & ~3;
  for (let i = 0; i < tail; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  const rest = length & 3;
  if (rest > 0) {
    if (rest === 3) h ^= data[tail + 2]! << 16;
    if (rest >= 2) h ^= data[tail + 1]! << 8;
    h ^= data[tail]!;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** What @platformatic/kafka hands a partitioner: the message, and its key as serialized. */
interface PartitionedMessage {
  topic: string;
  key?: unknown;
}

/**
 * A partitioner of @platformatic/kafka's producer. It returns a partition or a hash, which the
 * producer takes modulo the topic's partition count; a message that names its partition never
 * reaches it.
 */
export type KeyPartitioner = (
  message: PartitionedMessage,
  key: Buffer | undefined,
  context: PartitionerContext,
) => number;

/**
 * The Java client's partitioner (and kafkajs's default): a message with a key goes to
 * `murmur2(key) & 0x7fffffff` modulo the topic's partition count, so every key keeps its
 * partition; one without a key goes round-robin to the partitions that have a leader.
 * @platformatic/kafka's default partitioner hashes keys unsigned, which puts them elsewhere unless
 * the partition count is a power of two. The hash is computed from the key as the producer
 * serialized it, for every message: a few dozen nanoseconds for a Contact's key, less than a map
 * of remembered hashes costs to look a fresh string up in.
 */
export function keyHashPartitioner(): KeyPartitioner {
  let next = 0;
  return (message, key, { metadata }) => {
    if (key === undefined) {
      next = (next + 1) & 0x7fffffff;
      const partitions = metadata?.topics.get(message.topic)?.partitions;
      const led = partitions?.flatMap((p, index) => (p.leader >= 0 ? [index] : []));
      return led && led.length > 0 ? led[next % led.length]! : next;
    }
    return murmur2(key) & 0x7fffffff;
  };
}
