import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { consumeBatches, createKafka, createProducer, ensureTopics } from '../../src/index.js';

const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:59092').split(',');

describe('kafka factories', () => {
  it('when messages are produced, then a consumer group of the real broker reads them back with their keys, tombstones and headers, and commits', async () => {
    const kafka = createKafka({ brokers, clientId: 'kafka-lib-test' });
    const topic = `test.kafka-lib.${randomUUID()}`;
    expect(await ensureTopics(kafka, [{ topic, numPartitions: 3 }])).toEqual({
      created: [topic],
      reconciled: [],
    });
    expect(await ensureTopics(kafka, [{ topic, numPartitions: 3 }])).toEqual({
      created: [],
      reconciled: [],
    });

    const producer = createProducer(kafka);
    await producer.send({
      messages: [
        { topic, key: 'contact-1', value: JSON.stringify({ n: 1 }), headers: { traceparent: 'x' } },
        { topic, key: 'contact-1', value: null },
      ],
    });
    await producer.close();

    const groupId = `test-${randomUUID()}`;
    const consumer = kafka.consumer({ groupId, autocommit: false, maxWaitTime: 250 });
    const stream = await consumer.consume({
      topics: [topic],
      mode: 'committed',
      fallbackMode: 'earliest',
    });
    const received: { key: string | null; value: string | null; header?: string }[] = [];
    await consumeBatches(stream, async (messages) => {
      for (const m of messages) {
        received.push({ key: m.key, value: m.value, header: m.headers.get('traceparent') });
      }
      await messages.at(-1)!.commit();
      if (received.length >= 2) void stream.close();
    });
    await consumer.close();
    expect(received).toEqual([
      { key: 'contact-1', value: '{"n":1}', header: 'x' },
      { key: 'contact-1', value: null, header: undefined },
    ]);

    const admin = kafka.admin();
    const [group] = await admin.listConsumerGroupOffsets({ groups: [groupId] });
    const committed = group!.topics.flatMap((t) => t.partitions.map((p) => p.committedOffset));
    expect(committed.some((offset) => offset === 2n)).toBe(true);
    await admin.deleteTopics({ topics: [topic] });
    await admin.close();
  }, 60_000);
});
