// Telemetry of recording (STYLE: domain facts with units, never personal data): the
// events.accepted and events.recorded counters by route, events.dedup.hits by store,
// events.identity.unresolved and .resolution.duration, redis.failures (use dedup), and the
// events.record span. Metrics and spans go to in-memory readers, as the SDK would export them.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { trace } from '@opentelemetry/api';
import type { DataPoint } from '@opentelemetry/sdk-metrics';
import { installTestMetricReader } from '@herald/telemetry/testing';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { startEventsService, uniqueEmail, type TestEventsService } from '../support.js';

// Registered before the app is built: it makes its instruments from the provider of that moment.
const reader = installTestMetricReader();
const spans = new InMemorySpanExporter();
trace.setGlobalTracerProvider(
  new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }),
);

let svc: TestEventsService;
beforeAll(async () => {
  svc = await startEventsService();
});
afterAll(() => svc.close());

const OCCURRED = '2026-03-04T05:06:07.123Z';

async function metric(name: string) {
  const { resourceMetrics } = await reader.collect();
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const m of scope.metrics) {
      if (m.descriptor.name === name) {
        return {
          unit: m.descriptor.unit,
          points: m.dataPoints as Array<DataPoint<number>>,
        };
      }
    }
  }
  return undefined;
}

const valueFor = async (name: string, attributes: Record<string, string>) =>
  (await metric(name))?.points
    .filter((p) => Object.entries(attributes).every(([k, v]) => p.attributes[k] === v))
    .reduce((sum, p) => sum + p.value, 0) ?? 0;

describe('recording telemetry', () => {
  it('when a batch with a duplicate is recorded, then events.accepted counts every Event and events.recorded the written ones, by route', async () => {
    const { tenantId, token } = svc.newTenant();
    const email = uniqueEmail();
    await svc.contacts.createContact(tenantId, { email });
    const accepted = await valueFor('events.accepted', { route: 'by-email' });
    const recorded = await valueFor('events.recorded', { route: 'by-email' });

    const res = await svc.record('by-email', token, [
      { contactEmail: email, eventName: 'a', occurredAt: OCCURRED, dedupKey: 'k' },
      { contactEmail: email, eventName: 'a', occurredAt: OCCURRED, dedupKey: 'k' },
      { contactEmail: email, eventName: 'b', occurredAt: OCCURRED },
    ]);

    expect(res.status).toBe(202);
    expect(await valueFor('events.accepted', { route: 'by-email' })).toBe(accepted + 3);
    expect(await valueFor('events.recorded', { route: 'by-email' })).toBe(recorded + 2);
    expect((await metric('events.accepted'))?.unit).toBe('{event}');
    expect((await metric('events.recorded'))?.unit).toBe('{event}');
    // Attributes are the route alone: no Tenant, Contact or anything personal.
    for (const name of ['events.accepted', 'events.recorded']) {
      for (const point of (await metric(name))!.points) {
        expect(Object.keys(point.attributes)).toEqual(['route']);
      }
    }
  });

  it('when a request is refused, then nothing is counted as accepted', async () => {
    const { token } = svc.newTenant();
    const accepted = await valueFor('events.accepted', { route: 'by-external-id' });

    const res = await svc.record('by-external-id', token, {
      contactExternalId: 'nobody',
      eventName: 'x',
      occurredAt: OCCURRED,
    });

    expect(res.status).toBe(422);
    expect(await valueFor('events.accepted', { route: 'by-external-id' })).toBe(accepted);
  });

  it('when Events are recorded or refused, then the events.record span carries counts and the route, never identities', async () => {
    const { tenantId, token } = svc.newTenant();
    const email = uniqueEmail('secret.person');
    await svc.contacts.createContact(tenantId, { externalId: 'crm-secret-id', email });
    spans.reset();

    await svc.record('by-email', token, [
      { contactEmail: email, eventName: 'a', occurredAt: OCCURRED },
      { contactEmail: email, eventName: 'a', occurredAt: OCCURRED },
    ]);
    await svc.record('by-external-id', token, {
      contactExternalId: 'crm-unknown-id',
      eventName: 'x',
      occurredAt: OCCURRED,
    });

    const recorded = spans.getFinishedSpans().filter((s) => s.name === 'events.record');
    expect(recorded.map((s) => s.attributes)).toEqual([
      { 'herald.route': 'by-email', 'herald.event_count': 2, 'herald.recorded_count': 2 },
      { 'herald.route': 'by-external-id', 'herald.event_count': 1 },
    ]);
    expect(recorded[1]!.status.code).toBe(2); // ERROR
    const everything = JSON.stringify(
      recorded.map((s) => ({ a: s.attributes, e: s.events, st: s.status })),
    );
    expect(everything).not.toMatch(/secret|crm-|@example\.com/);
    expect(everything).not.toContain(tenantId);
  });
});

/** The count of a histogram's data points whose attributes include `attributes`. */
const countFor = async (name: string, attributes: Record<string, string>) => {
  const { resourceMetrics } = await reader.collect();
  return resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .filter((m) => m.descriptor.name === name)
    .flatMap((m) => m.dataPoints as Array<DataPoint<{ count: number }>>)
    .filter((p) => Object.entries(attributes).every(([k, v]) => p.attributes[k] === v))
    .reduce((sum, p) => sum + p.value.count, 0);
};

describe('dedup and identity telemetry', () => {
  it('when a dedupKey repeats in a request and the request is resent, then events.dedup.hits counts the first in the request and the second in Redis', async () => {
    const { tenantId, token } = svc.newTenant();
    const email = uniqueEmail();
    await svc.contacts.createContact(tenantId, { email });
    const request = await valueFor('events.dedup.hits', { route: 'by-email', store: 'request' });
    const redis = await valueFor('events.dedup.hits', { route: 'by-email', store: 'redis' });
    const event = { contactEmail: email, eventName: 'a', occurredAt: OCCURRED, dedupKey: 'k' };

    expect((await svc.record('by-email', token, [event, event])).status).toBe(202);
    expect((await svc.record('by-email', token, event)).status).toBe(202);

    expect(await valueFor('events.dedup.hits', { route: 'by-email', store: 'request' })).toBe(
      request + 1,
    );
    expect(await valueFor('events.dedup.hits', { route: 'by-email', store: 'redis' })).toBe(
      redis + 1,
    );
    for (const point of (await metric('events.dedup.hits'))!.points) {
      expect(Object.keys(point.attributes).sort()).toEqual(['route', 'store']);
    }
  });

  it('when Events name nobody, then events.identity.unresolved counts the 422 items, and each lookup of contacts is timed', async () => {
    const { token } = svc.newTenant();
    const unresolved = await valueFor('events.identity.unresolved', { route: 'by-email' });
    const lookups = await countFor('events.identity.resolution.duration', {
      source: 'contacts',
      outcome: 'ok',
    });

    const res = await svc.record('by-email', token, [
      { contactEmail: uniqueEmail('nobody'), eventName: 'x', occurredAt: OCCURRED },
      { contactEmail: uniqueEmail('nobody'), eventName: 'x', occurredAt: OCCURRED },
    ]);

    expect(res.status).toBe(422);
    expect(await valueFor('events.identity.unresolved', { route: 'by-email' })).toBe(
      unresolved + 2,
    );
    expect(
      await countFor('events.identity.resolution.duration', { source: 'contacts', outcome: 'ok' }),
    ).toBe(lookups + 1);
    expect((await metric('events.identity.resolution.duration'))?.unit).toBe('s');
  });
});

describe('dedup fast-path telemetry', () => {
  it('when Redis is down, then redis.failures counts the failures', async () => {
    const down = await startEventsService({ redisUrl: 'redis://127.0.0.1:9' });
    try {
      const { tenantId, token } = down.newTenant();
      const contact = await down.contacts.createContact(tenantId, { externalId: 'u' });
      const before = await valueFor('redis.failures', { use: 'dedup', operation: 'lookup' });

      const res = await down.record('by-contact-id', token, {
        contactId: contact.id,
        eventName: 'x',
        occurredAt: OCCURRED,
        dedupKey: 'k',
      });

      expect(res.status).toBe(202);
      expect(await valueFor('redis.failures', { use: 'dedup', operation: 'lookup' })).toBe(
        before + 1,
      );
      expect((await metric('redis.failures'))?.unit).toBe('{error}');

      // With the fast path away, PostgreSQL's claim finds the duplicate.
      const postgresql = await valueFor('events.dedup.hits', {
        route: 'by-contact-id',
        store: 'postgresql',
      });
      const again = await down.record('by-contact-id', token, {
        contactId: contact.id,
        eventName: 'x',
        occurredAt: OCCURRED,
        dedupKey: 'k',
      });
      expect(again.status).toBe(202);
      expect(
        await valueFor('events.dedup.hits', { route: 'by-contact-id', store: 'postgresql' }),
      ).toBe(postgresql + 1);
    } finally {
      await down.close();
    }
  });
});
