import { Partitioners, type ICustomPartitioner } from 'kafkajs';

const M = 0x5bd1e995;
const SEED = 0x9747b28c;

/**
 * Kafka's murmur2 of a key (the Java client's `Utils.murmur2`), as a signed 32-bit integer. The
 * same as kafkajs's own, which computes it with 64-bit integer objects: a tenth of a relay's CPU
 * went to hashing keys that way.
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

/** Keys whose hash a partitioner remembers; past it, it starts over. */
const REMEMBERED_KEYS = 50_000;

/**
 * kafkajs's default partitioner (the Java client's): a message with a key goes to
 * `murmur2(key) & 0x7fffffff` modulo the topic's partition count, so every key keeps its
 * partition, and one without a key round-robin (kafkajs's own code). Keys repeat (a Contact's
 * Events share one), so each string key's hash is computed once and remembered.
 */
export const keyHashPartitioner: ICustomPartitioner = () => {
  const unkeyed = Partitioners.DefaultPartitioner();
  const hashes = new Map<string, number>();
  return (args) => {
    const { message, partitionMetadata } = args;
    const { key } = message;
    if ((message.partition !== undefined && message.partition !== null) || key == null) {
      return unkeyed(args);
    }
    let hash = typeof key === 'string' ? hashes.get(key) : undefined;
    if (hash === undefined) {
      hash = murmur2(key) & 0x7fffffff;
      if (typeof key === 'string') {
        if (hashes.size >= REMEMBERED_KEYS) hashes.clear();
        hashes.set(key, hash);
      }
    }
    return hash % partitionMetadata.length;
  };
};
