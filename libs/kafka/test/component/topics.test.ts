// Topic settings against the stack's real broker: a compacted topic made with the bounded
// settings lets an erased key's snapshot go within the bound, and `ensureTopics` brings an
// existing topic to the declared settings. Each test makes its own uniquely named topic.
import { afterAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { ConfigResourceTypes, ConfigSources, ListOffsetTimestamps } from '@platformatic/kafka';
import {
  compactedTopicConfig,
  consumeBatches,
  createKafka,
  createProducer,
  ensureTopics,
  retainedTopicConfig,
  withTopicConfig,
  type Kafka,
} from '../../src/index.js';

const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:59092').split(',');
const kafka = createKafka({ brokers, clientId: 'kafka-lib-topics-test' });
const made: string[] = [];

afterAll(async () => {
  const admin = kafka.admin();
  try {
    const existing = new Set(await admin.listTopics());
    const ours = made.filter((t) => existing.has(t));
    if (ours.length > 0) await admin.deleteTopics({ topics: ours });
  } finally {
    await admin.close();
  }
});

const uniqueTopic = (label: string) => {
  const topic = `test.kafka-lib.${label}.${randomUUID()}`;
  made.push(topic);
  return topic;
};

/** The topic's own (topic-level) settings, as Kafka describes them. */
/**
 * Asserts on a topic's own settings until the assertion holds (10 s at most): the broker applies
 * an acknowledged config change through its metadata log, so a describe just after may not show it.
 */
async function expectSettings(
  topic: string,
  assert: (settings: Record<string, string>) => void,
): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      assert(await ownSettings(topic));
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

async function ownSettings(topic: string): Promise<Record<string, string>> {
  const admin = kafka.admin();
  try {
    const [described] = await admin.describeConfigs({
      resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: topic }],
      includeSynonyms: false,
    });
    return Object.fromEntries(
      described!.configs
        .filter((e) => e.configSource === ConfigSources.DYNAMIC_TOPIC_CONFIG)
        .map((e) => [e.name, e.value ?? '']),
    );
  } finally {
    await admin.close();
  }
}

interface HeldRecord {
  offset: string;
  key: string | null;
  value: string | null;
}

/** Everything partition 0 holds now, read from its beginning by a fresh consumer. */
async function readFromBeginning(client: Kafka, topic: string): Promise<HeldRecord[]> {
  const consumer = client.consumer({ groupId: `test-read-${randomUUID()}`, maxWaitTime: 250 });
  try {
    const ends = await consumer.listOffsets({ topics: [topic] });
    const starts = await consumer.listOffsets({
      topics: [topic],
      timestamp: ListOffsetTimestamps.EARLIEST,
    });
    const end = ends.get(topic)![0]!;
    if (starts.get(topic)![0]! >= end) return [];
    const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: false });
    const records: HeldRecord[] = [];
    const timer = setTimeout(
      () => stream.destroy(new Error(`reading ${topic} did not reach offset ${end} in 20 s`)),
      20_000,
    );
    try {
      await consumeBatches(stream, (messages) => {
        for (const message of messages) {
          records.push({
            offset: String(message.offset),
            key: message.key,
            value: message.value,
          });
          if (message.offset >= end - 1n) void stream.close();
        }
        return Promise.resolve();
      });
    } finally {
      clearTimeout(timer);
    }
    return records;
  } finally {
    await consumer.close(true);
  }
}

describe('topic settings', () => {
  it('compacted: a lag bound closes segments at half of it, and tombstones stay as long as the bound', () => {
    expect(compactedTopicConfig({ maxCompactionLagMs: 86_400_000 })).toEqual({
      'cleanup.policy': 'compact',
      'max.compaction.lag.ms': '86400000',
      'segment.ms': '43200000',
      'min.cleanable.dirty.ratio': '0.1',
      'delete.retention.ms': '86400000',
    });
  });

  it('retained: segments span a seventh of the retention, at most a day', () => {
    expect(retainedTopicConfig({ retentionMs: 604_800_000 })).toEqual({
      'cleanup.policy': 'delete',
      'retention.ms': '604800000',
      'segment.ms': '86400000',
    });
    expect(retainedTopicConfig({ retentionMs: 3_600_000 })['segment.ms']).toBe('514286');
    expect(retainedTopicConfig({ retentionMs: 30 * 86_400_000 })['segment.ms']).toBe('86400000');
  });

  it.each([0, -1, 1.5, Number.NaN])('a bound of %p ms is refused', (ms) => {
    expect(() => compactedTopicConfig({ maxCompactionLagMs: ms })).toThrow(RangeError);
    expect(() => retainedTopicConfig({ retentionMs: ms })).toThrow(RangeError);
  });

  it('withTopicConfig: its settings win over the ones the topic declares, the others stay', () => {
    expect(
      withTopicConfig(
        {
          topic: 't',
          numPartitions: 6,
          configEntries: [
            { name: 'cleanup.policy', value: 'delete' },
            { name: 'max.message.bytes', value: '2000000' },
          ],
        },
        { 'cleanup.policy': 'compact', 'segment.ms': '1000' },
      ),
    ).toEqual({
      topic: 't',
      numPartitions: 6,
      configEntries: [
        { name: 'cleanup.policy', value: 'compact' },
        { name: 'max.message.bytes', value: '2000000' },
        { name: 'segment.ms', value: '1000' },
      ],
    });
  });
});

/** The broker's log.cleaner.backoff.ms: how long its cleaner sleeps when no log is due. */
async function cleanerBackoffMs(): Promise<number> {
  const admin = kafka.admin();
  try {
    const { brokers: nodes } = await admin.metadata({ topics: [] });
    const [broker] = [...nodes.keys()];
    const [described] = await admin.describeConfigs({
      resources: [
        {
          resourceType: ConfigResourceTypes.BROKER,
          resourceName: String(broker),
          configurationKeys: ['log.cleaner.backoff.ms'],
        },
      ],
      includeSynonyms: false,
    });
    return Number(described!.configs[0]!.value);
  } finally {
    await admin.close();
  }
}

describe('ensureTopics on the local broker', () => {
  it(
    'when a snapshot is followed by its tombstone on a compacted topic made with a short bound, then ' +
      'reading the topic from the beginning no longer returns the snapshot within the bound',
    async () => {
      // Short settings: a 4 s lag bound (segments close after 2 s). The broker's cleaner sleeps
      // log.cleaner.backoff.ms between passes when nothing is due, so a due segment waits up to
      // that much more; the writes below come every 2 s, and reading the topic takes a moment.
      const lagMs = 4_000;
      const deadlineMs = lagMs + (await cleanerBackoffMs()) + 2 * 2_000 + 5_000;
      const topic = uniqueTopic('compaction');
      const spec = withTopicConfig(
        { topic, numPartitions: 1 },
        compactedTopicConfig({ maxCompactionLagMs: lagMs }),
      );
      expect((await ensureTopics(kafka, [spec])).created).toEqual([topic]);

      const contactId = randomUUID();
      const snapshot = JSON.stringify({ contact: { id: contactId, email: 'ada@example.com' } });
      const producer = createProducer(kafka);
      try {
        // What a Contact's change and then its erasure publish on herald.contacts.changed.
        await producer.send({ messages: [{ topic, key: contactId, value: snapshot }] });
        await producer.send({ messages: [{ topic, key: contactId, value: null }] });
        const before = await readFromBeginning(kafka, topic);
        expect(before.filter((r) => r.key === contactId).map((r) => r.value)).toEqual([
          snapshot,
          null,
        ]);

        // Kafka compacts closed segments only, and closes the active one on the first write
        // after segment.ms: other Contacts' changes landing in the partition, as on the real
        // topic, where every partition keeps receiving them.
        const started = Date.now();
        let held: HeldRecord[] = before;
        let writes = 0;
        while (held.some((r) => r.key === contactId && r.value === snapshot)) {
          if (Date.now() - started > deadlineMs) {
            throw new Error(
              `the snapshot is still in ${topic} after ${deadlineMs} ms: ` +
                JSON.stringify(held.slice(0, 5)),
            );
          }
          await new Promise((r) => setTimeout(r, 2_000));
          await producer.send({
            messages: [
              { topic, key: `other-${writes++ % 3}`, value: JSON.stringify({ n: writes }) },
            ],
          });
          held = await readFromBeginning(kafka, topic);
        }
        // Compaction kept the latest value of every other key.
        const latest = new Map(held.map((r) => [r.key, r.value]));
        expect(latest.get(`other-${(writes - 1) % 3}`)).toBe(JSON.stringify({ n: writes }));
      } finally {
        await producer.close();
      }
    },
    120_000,
  );

  it('when a topic exists with other settings, then the declared ones are set, its own others stay, and a second run changes nothing', async () => {
    const topic = uniqueTopic('reconcile');
    // As an older release (or an operator) left it: compacted, with a setting of its own.
    const admin = kafka.admin();
    await admin.createTopics({
      topics: [topic],
      partitions: 1,
      configs: [
        { name: 'cleanup.policy', value: 'compact' },
        { name: 'max.message.bytes', value: '2000000' },
      ],
    });
    await admin.close();

    const spec = (lagMs: number) =>
      withTopicConfig(
        { topic, numPartitions: 1 },
        compactedTopicConfig({ maxCompactionLagMs: lagMs }),
      );

    expect(await ensureTopics(kafka, [spec(86_400_000)])).toEqual({
      created: [],
      reconciled: [
        { topic, name: 'max.compaction.lag.ms', from: null, to: '86400000' },
        { topic, name: 'segment.ms', from: null, to: '43200000' },
        { topic, name: 'min.cleanable.dirty.ratio', from: null, to: '0.1' },
        { topic, name: 'delete.retention.ms', from: null, to: '86400000' },
      ],
    });
    await expectSettings(topic, (settings) =>
      expect(settings).toEqual({
        'cleanup.policy': 'compact',
        'max.message.bytes': '2000000',
        'max.compaction.lag.ms': '86400000',
        'segment.ms': '43200000',
        'min.cleanable.dirty.ratio': '0.1',
        'delete.retention.ms': '86400000',
      }),
    );

    expect((await ensureTopics(kafka, [spec(86_400_000)])).reconciled).toEqual([]);

    // An operator shortens the bound: only what follows from it changes.
    expect((await ensureTopics(kafka, [spec(3_600_000)])).reconciled).toEqual([
      { topic, name: 'max.compaction.lag.ms', from: '86400000', to: '3600000' },
      { topic, name: 'segment.ms', from: '43200000', to: '1800000' },
      { topic, name: 'delete.retention.ms', from: '86400000', to: '3600000' },
    ]);
    await expectSettings(topic, (settings) =>
      expect(settings).toMatchObject({
        'max.message.bytes': '2000000',
        'max.compaction.lag.ms': '3600000',
        'segment.ms': '1800000',
      }),
    );
  });

  it('when a retained topic is made, then it holds the retention as its own setting', async () => {
    const topic = uniqueTopic('retention');
    const spec = withTopicConfig(
      { topic, numPartitions: 1 },
      retainedTopicConfig({ retentionMs: 604_800_000 }),
    );
    expect(await ensureTopics(kafka, [spec])).toEqual({ created: [topic], reconciled: [] });
    expect(await ownSettings(topic)).toEqual({
      'cleanup.policy': 'delete',
      'retention.ms': '604800000',
      'segment.ms': '86400000',
    });
  });
});
