// The topic reader on the local Kafka: a topic of this package's own, written here.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createProducer, type Producer } from '@herald/kafka';
import { ensureTestTopics, testKafka, watchTopics, type TopicWatch } from '../../src/index.js';

const TOPIC = 'herald.testing-lib.watch';

let producer: Producer;
let watch: TopicWatch;
beforeAll(async () => {
  await ensureTestTopics([{ topic: TOPIC, numPartitions: 2 }], 'testing-lib-test-setup');
  producer = createProducer(testKafka('testing-lib-test'));
  watch = await watchTopics([TOPIC], { clientId: 'testing-lib-test-watch' });
});
afterAll(async () => {
  await watch?.stop();
  await producer?.close();
});

describe('watchTopics', () => {
  it('when messages are published after it started, then it reads them with key, value, headers and partition', async () => {
    const run = randomUUID();
    await producer.send({
      messages: [
        {
          topic: TOPIC,
          key: 'a',
          value: JSON.stringify({ run, n: 1 }),
          headers: { traceparent: 'tp-1' },
        },
        { topic: TOPIC, key: 'a', value: null },
        { topic: TOPIC, key: 'b', value: JSON.stringify({ run, n: 2 }) },
      ],
    });

    const first = await watch.waitFor((m) => (m.value as { run?: string } | null)?.run === run);
    expect(first).toEqual({
      topic: TOPIC,
      partition: expect.any(Number),
      key: 'a',
      value: { run, n: 1 },
      raw: JSON.stringify({ run, n: 1 }),
      headers: { traceparent: 'tp-1' },
    });
    const both = await watch.waitForCount(
      (m) => (m.value as { run?: string } | null)?.run === run,
      2,
    );
    expect(both.map((m) => m.key).sort()).toEqual(['a', 'b']);
    const tombstone = await watch.waitFor((m) => m.key === 'a' && m.value === null);
    expect(tombstone.raw).toBeNull();
  });

  it('when too few messages match in time, then waitForCount rejects, saying how many came', async () => {
    await expect(watch.waitForCount(() => false, 1, 50)).rejects.toThrow(
      `0 of 1 matching messages on ${TOPIC} within 50 ms`,
    );
  });
});
