// The producers' partitioner must put every key where the Java client's partitioner does: a
// key's messages stay in one partition, across versions and clients.
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import {
  compatibilityPartitioner,
  murmur2 as platformaticMurmur2,
  type ClusterMetadata,
  type PartitionerContext,
} from '@platformatic/kafka';
import { keyHashPartitioner, murmur2 } from '../../src/index.js';

/** What the producer hands a partitioner: the metadata of a topic with these leaders. */
const context = (leaders: number[]): PartitionerContext => ({
  metadata: {
    topics: new Map([
      [
        't',
        {
          id: 't',
          partitionsCount: leaders.length,
          lastUpdate: 0,
          partitions: leaders.map((leader) => ({
            leader,
            leaderEpoch: 0,
            replicas: [1],
            isr: [1],
            offlineReplicas: [],
          })),
        },
      ],
    ]),
  } as unknown as ClusterMetadata,
});

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
  it("when hashing any key, then it equals @platformatic/kafka's murmur2", () => {
    for (const key of keys) expect(murmur2(key)).toBe(platformaticMurmur2(key, false));
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
  it("when a message has a key, then it goes to the Java client's partition (compatibilityPartitioner's), the second time too", () => {
    const ours = keyHashPartitioner();
    for (const count of [1, 3, 12, 50]) {
      const ctx = context(Array.from({ length: count }, () => 1));
      for (const key of keys) {
        const bytes = typeof key === 'string' ? Buffer.from(key) : key;
        const message = { topic: 't', key, value: 'v' };
        const java = compatibilityPartitioner(message, bytes) % count;
        for (let time = 0; time < 2; time += 1) {
          expect(ours(message, bytes, ctx) % count).toBe(java);
        }
      }
    }
  });

  it('when a message has no key, then it goes round-robin to the partitions with a leader', () => {
    const ours = keyHashPartitioner();
    const ctx = context([-1, 1, 2, -1]);
    const chosen = Array.from({ length: 6 }, () => ours({ topic: 't' }, undefined, ctx) % 4);
    expect(new Set(chosen)).toEqual(new Set([1, 2]));
    expect(chosen.filter((p) => p === 1)).toHaveLength(3);
  });
});
