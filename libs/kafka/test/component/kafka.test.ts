import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createKafka, createProducer, ensureTopics } from '../../src/index.js';

const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:59092').split(',');

describe('kafka factories', () => {
  it('when a message is produced, then a consumer of the real broker reads it back with its key and headers', async () => {
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
    await producer.connect();
    await producer.send({
      topic,
      messages: [
        { key: 'contact-1', value: JSON.stringify({ n: 1 }), headers: { traceparent: 'x' } },
      ],
    });
    await producer.disconnect();

    const consumer = kafka.consumer({ groupId: `test-${randomUUID()}` });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const received = await new Promise<{ key: string; value: string; header: string }>(
      (resolve) => {
        void consumer.run({
          eachMessage: async ({ message }) => {
            resolve({
              key: message.key!.toString(),
              value: message.value!.toString(),
              header: message.headers!.traceparent!.toString(),
            });
          },
        });
      },
    );
    await consumer.disconnect();
    expect(received).toEqual({ key: 'contact-1', value: '{"n":1}', header: 'x' });

    const admin = kafka.admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [topic] });
    await admin.disconnect();
  }, 60_000);
});
