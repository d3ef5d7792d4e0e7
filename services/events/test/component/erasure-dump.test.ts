// Erasure leaves nothing, through the real seam: after a Contact's erasure through the contacts service's
// public route (204), no database the tests use (every Herald database: the contacts and events
// test databases included) holds its email, name, phone or externalId, the properties of its
// Events or their raw dedupKeys; nor does this Tenant's dedup namespace in Redis. Each database
// is dumped with pg_dump and searched.
import { randomInt, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { taggedKey, type RedisClient } from '@herald/redis';
import { DUMP_SEARCH_TIMEOUT_MS, searchHeraldDatabaseDumps } from '@herald/testing';
import { startEventsService, type TestEventsService } from '../support.js';

/** The databases test setup uses here (support.ts); they must be among those dumped. */
const TEST_DATABASES = [
  process.env.HERALD_EVENTS_TEST_DATABASE ?? 'herald_events_test',
  'herald_events_test_contacts',
];

let service: TestEventsService;
beforeAll(async () => {
  service = await startEventsService({ contactDataSeam: true });
});
afterAll(() => service?.close());

/** Every value under this Tenant's dedup namespace in Redis: its keys and what they hold. */
async function dedupNamespace(tenantId: string): Promise<string[]> {
  // The tests' Redis is a single node.
  const redis = service.redis as RedisClient;
  const found: string[] = [];
  for await (const keys of redis.scanIterator({
    MATCH: taggedKey('dedup', tenantId, '*'),
    COUNT: 1000,
  })) {
    for (const key of [keys].flat()) {
      found.push(key, (await redis.get(key)) ?? '');
    }
  }
  return found;
}

describe('erasure leaves no trace of a Contact or its Events in any database', () => {
  it(
    'when a Contact with Events is erased through the contacts service, then no dump of any Herald database holds its email, name, phone, externalId, its Events\u2019 properties or raw dedupKeys, and Redis holds no raw dedupKey',
    async () => {
      // Unique, recognisable values, so a match can only be this Contact.
      const suffix = randomUUID().replaceAll('-', '').slice(0, 12);
      const digits = Array.from({ length: 12 }, () => randomInt(10)).join('');
      const traces = {
        email: `events-dump-${suffix}@example.com`,
        name: `Lastname EventsDump${suffix}`,
        phone: `+49${digits}`,
        externalId: `events-dump-ext-${suffix}`,
        property: `events-dump-prop-${suffix}`,
        dedupKey: `events-dump-key-${suffix}`,
      };
      const { tenantId, token } = service.newTenant();
      const created = await service.contacts.request('PUT', `/v1/contacts/${traces.externalId}`, {
        token,
        body: { email: traces.email, name: traces.name, phone: traces.phone },
      });
      expect(created.status).toBe(201);
      const { id } = await created.json<{ id: string }>();
      const occurredAt = '2026-11-21T10:00:00Z';
      const recorded = await service.record('by-contact-id', token, [
        {
          contactId: id,
          eventName: 'Dumped',
          occurredAt,
          dedupKey: traces.dedupKey,
          properties: { note: traces.property },
        },
        {
          contactId: id,
          eventName: 'Dumped Again',
          occurredAt,
          dedupKey: `${traces.dedupKey}-2`,
          properties: { nested: { list: [traces.property] } },
        },
      ]);
      expect(recorded.status).toBe(202);

      // The search can fail: before the erasure, the dumps do hold every value.
      const before = await searchHeraldDatabaseDumps(Object.values(traces));
      expect(before.databases).toEqual(expect.arrayContaining(TEST_DATABASES));
      for (const value of Object.values(traces)) {
        expect({ value, databases: before.holding(value).length > 0 }).toEqual({
          value,
          databases: true,
        });
      }
      // The fast path remembered the claims (under the keys' hashes).
      expect((await dedupNamespace(tenantId)).length).toBe(4);

      const erase = await service.contacts.request('POST', `/v1/contacts/by-id/${id}/erase`, {
        token,
      });
      expect(erase.status).toBe(204);

      const after = await searchHeraldDatabaseDumps(Object.values(traces));
      expect(after.databases).toEqual(expect.arrayContaining(TEST_DATABASES));
      for (const value of Object.values(traces)) {
        expect({ value, databases: after.holding(value) }).toEqual({ value, databases: [] });
      }
      const redisValues = await dedupNamespace(tenantId);
      for (const value of Object.values(traces)) {
        expect(redisValues.filter((v) => v.includes(value))).toEqual([]);
      }
    },
    DUMP_SEARCH_TIMEOUT_MS,
  );
});
