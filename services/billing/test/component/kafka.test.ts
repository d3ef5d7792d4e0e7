// Every change reaches Kafka through the outbox and the in-process relay, in order, keyed by
// Tenant, in the shape libs/messages declares.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createKafka, createProducer, ensureTopics, type Producer } from '@herald/kafka';
import { subscriptionChangedMessage, topicSpecs, TOPICS } from '@herald/messages';
import { createOutboxRelay, type OutboxRelay } from '@herald/outbox';
import { TEST_KAFKA_BROKERS, watchTenant } from '@herald/testing';
import {
  prepareBillingDatabase,
  silentLogger,
  startBillingService,
  type TestBillingService,
} from '../support.js';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('billing messages on Kafka', () => {
  let svc: TestBillingService;
  let producer: Producer;
  let relay: OutboxRelay;

  beforeAll(async () => {
    const kafka = createKafka({ brokers: TEST_KAFKA_BROKERS, clientId: 'billing-test' });
    await ensureTopics(kafka, topicSpecs([TOPICS.subscriptionsChanged]));
    // Its own database: this file's relay publishes and deletes outbox rows other files read.
    svc = await startBillingService({
      databaseUrl: await prepareBillingDatabase('herald_billing_test_relay'),
    });
    producer = createProducer(kafka);
    relay = createOutboxRelay({
      pool: svc.pool,
      producer,
      logger: silentLogger(),
      name: 'billing-test',
      pollIntervalMs: 50,
    });
    relay.start();
  });
  afterAll(async () => {
    await relay.stop();
    await producer.close();
    await svc.close();
  });

  it('when a Tenant fails three payments and is reactivated, then four messages arrive in order', async () => {
    const tenantId = svc.newTenant();
    const watch = await watchTenant(TOPICS.subscriptionsChanged, tenantId);
    try {
      for (let i = 0; i < 3; i += 1) await svc.fail(tenantId);
      await svc.updateDetails(tenantId);
      // A repeat changes nothing and announces nothing.
      await svc.updateDetails(tenantId);

      const received = await watch.waitForCount(4);
      // Give a fifth, wrong message the time to show up.
      await new Promise((r) => setTimeout(r, 500));
      expect(received).toHaveLength(4);
      expect(received.map((m) => m.key)).toStrictEqual(Array(4).fill(tenantId));
      expect(new Set(received.map((m) => m.partition)).size).toBe(1);
      const values = received.map((m) => subscriptionChangedMessage.parse(m.value));
      expect(
        values.map(({ state, consecutiveFailures, version }) => ({
          state,
          consecutiveFailures,
          version,
        })),
      ).toStrictEqual([
        { state: 'active', consecutiveFailures: 1, version: 1 },
        { state: 'active', consecutiveFailures: 2, version: 2 },
        { state: 'suspended', consecutiveFailures: 3, version: 3 },
        { state: 'active', consecutiveFailures: 0, version: 4 },
      ]);
      for (const m of received) {
        expect(m.value).toStrictEqual({
          schemaVersion: 1,
          type: 'subscription.changed',
          tenantId,
          state: expect.any(String),
          consecutiveFailures: expect.any(Number),
          version: expect.any(Number),
          changedAt: expect.stringMatching(TIMESTAMP),
        });
      }
      expect(await relay.stats()).toMatchObject({ pending: 0 });
    } finally {
      await watch.stop();
    }
  });
});
