// Kafka stopped while Events are recorded: the API keeps answering 202 (Kafka is never in the way),
// and when Kafka is back the events relay publishes every Event recorded meanwhile, at least
// once, each Contact's in order. Stops and starts the stack's Kafka: run alone.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TOPICS } from '@herald/messages';
import { consumeUntil, markTopicEnd, type Published } from '@herald/testing';
import {
  ROUTES,
  event,
  exportedEvents,
  newContact,
  newFixture,
  record,
  restore,
  stop,
  type EventBody,
  type Fixture,
  type Route,
} from './support.js';

const RESILIENCE_WATCH = { clientId: 'resilience-test', groupPrefix: 'resilience' };

const topic = TOPICS.eventsRecorded;

/** The first message of each Event id: at least once may deliver one twice. */
function firstOfEach(messages: Published[]): Published[] {
  const seen = new Set<unknown>();
  return messages.filter((m) => !seen.has(m.value.eventId) && seen.add(m.value.eventId));
}

let f: Fixture;

beforeAll(async () => {
  await restore();
  f = await newFixture('Resilience: Kafka stopped');
});

afterAll(async () => {
  await restore();
});

describe('Kafka stopped', () => {
  it('when Kafka is stopped, then every Event is answered 202, and once Kafka is back every one of them is published, keyed and in order', async () => {
    const a = await newContact(f);
    const b = await newContact(f);
    const groupId = await markTopicEnd(topic, RESILIENCE_WATCH);
    const sent: Array<{ route: Route; body: EventBody | EventBody[]; count: number }> = [];

    await stop('kafka');
    try {
      // 12 single Events about Contact a, one after the other, through the Contact routes.
      for (let i = 0; i < 12; i += 1) {
        const route = ROUTES[i % 3]!;
        sent.push({ route, body: event(route, f, a, { eventName: `Step ${i}` }), count: 1 });
      }
      // Two arrays of 25 about Contact b, and an array of 10 organization Events.
      for (const route of ['by-email', 'by-organization'] as const) {
        const body = Array.from({ length: 25 }, (_, i) =>
          event(route, f, b, { eventName: `Batch ${i}`, dedupKey: `k-${randomUUID()}` }),
        );
        sent.push({ route, body, count: 25 });
      }
      sent.push({
        route: 'by-organization',
        body: Array.from({ length: 10 }, (_, i) => ({
          organizationExternalId: f.organization,
          eventName: `Org ${i}`,
          occurredAt: new Date().toISOString(),
        })),
        count: 10,
      });
      for (const { route, body, count } of sent) {
        const res = await record(f, route, body);
        expect(res.status).toBe(202);
        expect(await res.json()).toStrictEqual({ accepted: count });
      }
    } finally {
      await restore();
    }

    const total = sent.reduce((n, s) => n + s.count, 0);
    const published = firstOfEach(
      await consumeUntil(
        topic,
        groupId,
        f.tenantId,
        (r) => firstOfEach(r).length >= total,
        90_000,
        RESILIENCE_WATCH,
      ),
    );
    expect(published).toHaveLength(total);

    // The very Events the export holds, each keyed by its Contact or organization.
    const exportedIds = [
      ...(await exportedEvents(f, a.id)),
      ...(await exportedEvents(f, b.id)),
    ].map((e) => e.id);
    expect(exportedIds).toHaveLength(12 + 50);
    const publishedIds = new Set(published.map((m) => m.value.eventId));
    for (const id of exportedIds) expect(publishedIds.has(id)).toBe(true);
    const keys: Record<string, number> = {};
    for (const m of published) keys[m.key ?? 'null'] = (keys[m.key ?? 'null'] ?? 0) + 1;
    expect(keys).toStrictEqual({
      [`${f.tenantId}:contact:${a.id}`]: 12,
      [`${f.tenantId}:contact:${b.id}`]: 25,
      [`${f.tenantId}:organization:${f.organization}`]: 25 + 10,
    });

    // Contact a's Events, recorded one after the other, arrive in that order, in one partition.
    const steps = published.filter((m) => String(m.value.eventName).startsWith('Step '));
    expect(steps.map((m) => m.value.eventName)).toStrictEqual(
      Array.from({ length: 12 }, (_, i) => `Step ${i}`),
    );
    expect(new Set(steps.map((m) => m.partition)).size).toBe(1);
  });
});
