// The producers' partitioner must put every key where kafkajs's default (Java-compatible)
// partitioner does: a key's messages stay in one partition, across versions and clients.
import { randomBytes, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { describe, expect, it } from '@jest/globals';
import { Partitioners, type PartitionerArgs } from 'kafkajs';
import { keyHashPartitioner, murmur2 } from '../../src/index.js';

const require = createRequire(import.meta.url);
const kafkajsMurmur2 = require('kafkajs/src/producer/partitioners/default/murmur2.js') as (
  key: string | Buffer,
) => number;

const partitions = (count: number): PartitionerArgs['partitionMetadata'] =>
  Array.from({ length: count }, (_, partitionId) => ({
    partitionErrorCode: 0,
    partitionId,
    leader: 1,
    replicas: [1],
    isr: [1],
  }));

// Keys of every length mod 4, multi-byte UTF-8, bytes with the high bit set, and Herald's own.
const keys: (string | Buffer)[] = [
  '',
  'a',
  'ab',
  'abc',
  'abcd',
  'é',
  'ключ-🙂',
  `${randomUUID()}:contact:${randomUUID()}`,
  `${randomUUID()}:organization:acme`,
  ...Array.from({ length: 500 }, (_, i) => randomBytes(i % 67).toString('base64')),
  ...Array.from({ length: 200 }, (_, i) => randomBytes(1 + (i % 41))),
];

describe('murmur2', () => {
  it("when hashing any key, then it equals kafkajs's murmur2", () => {
    for (const key of keys) expect(murmur2(key)).toBe(kafkajsMurmur2(key));
  });

  it("when hashing the Java client's test vectors, then it gives the Java client's values", () => {
    // org.apache.kafka.common.utils.UtilsTest#testMurmur2
    const cases: [string, number][] = [
      ['21', -973932308],
      ['foobar', -790332482],
      ['a-little-bit-long-string', -985981536],
      ['a-little-bit-longer-string', -1486304829],
      ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
    ];
    for (const [key, hash] of cases) expect(murmur2(Buffer.from(key))).toBe(hash);
  });
});

describe('keyHashPartitioner', () => {
  it("when a message has a key, then it goes to the default partitioner's partition, the second time too", () => {
    const ours = keyHashPartitioner();
    const theirs = Partitioners.DefaultPartitioner();
    for (const count of [1, 3, 12, 50]) {
      const partitionMetadata = partitions(count);
      for (const key of keys) {
        for (let time = 0; time < 2; time += 1) {
          const args = { topic: 't', partitionMetadata, message: { key, value: 'v' } };
          expect(ours(args)).toBe(theirs(args));
        }
      }
    }
  });

  it('when a message names its partition, then it goes there; without a key, to partitions with a leader', () => {
    const ours = keyHashPartitioner();
    const partitionMetadata = partitions(4);
    expect(
      ours({ topic: 't', partitionMetadata, message: { key: 'k', partition: 3, value: 'v' } }),
    ).toBe(3);
    const led = partitionMetadata.map((p) => (p.partitionId === 2 ? p : { ...p, leader: -1 }));
    for (let i = 0; i < 5; i += 1) {
      expect(ours({ topic: 't', partitionMetadata: led, message: { value: 'v' } })).toBe(2);
    }
  });
});
