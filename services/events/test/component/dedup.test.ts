// Dedup: per Tenant, across routes, 60 s from the first
// recording; PostgreSQL decides inside the recording's transaction, Redis only remembers
// committed claims to spare PostgreSQL the certain duplicates.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  startEventsService,
  storedState,
  uniqueEmail,
  type TestContact,
  type TestEventsService,
} from '../support.js';
import { dedupCacheKey, hashDedupKey } from '../../src/recording/dedup-key.js';

let svc: TestEventsService;
beforeAll(async () => {
  svc = await startEventsService({ poolMax: 20 });
});
afterAll(() => svc.close());

const OCCURRED = '2026-03-04T05:06:07.123Z';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function tenantWithContact(service = svc) {
  const tenant = service.newTenant();
  const email = uniqueEmail();
  const contact = await service.contacts.createContact(tenant.tenantId, {
    externalId: 'user-1',
    email,
  });
  return { ...tenant, contact: contact as TestContact & { email: string } };
}

const event = (contactId: string, dedupKey: string | undefined, eventName = 'x') => ({
  contactId,
  eventName,
  occurredAt: OCCURRED,
  ...(dedupKey === undefined ? {} : { dedupKey }),
});

const cached = (service: TestEventsService, tenantId: string, key: string) =>
  service.redis.get(dedupCacheKey(tenantId, key));

describe('inside one request', () => {
  it('when one dedupKey appears three times, then the first Event is recorded once and accepted counts all three', async () => {
    const { tenantId, token, contact } = await tenantWithContact();

    const res = await svc.record('by-contact-id', token, [
      { ...event(contact.id, 'k'), eventName: 'first', properties: { n: 1 } },
      event(contact.id, undefined, 'no_key'),
      { ...event(contact.id, 'k'), eventName: 'second', properties: { n: 2 } },
      { ...event(contact.id, 'k'), eventName: 'third' },
    ]);

    expect(res.status).toBe(202);
    expect(await res.json()).toStrictEqual({ accepted: 4 });
    const { events, claims, outbox, names } = await storedState(svc.pool, tenantId);
    expect(events.map((e) => [e.event_name, e.dedup_key, e.properties]).sort()).toEqual([
      ['first', 'k', '{"n":1}'],
      ['no_key', null, null],
    ]);
    const first = events.find((e) => e.event_name === 'first')!;
    expect(claims).toEqual([
      { dedup_key: hashDedupKey('k'), event_id: first.id, claimed_at: expect.any(Date) },
    ]);
    expect(outbox).toHaveLength(2);
    // A duplicate's name was not recorded, so it is not cataloged either.
    expect(names.map((n) => n.name)).toEqual(['first', 'no_key']);
  });

  it('when Events have no dedupKey, then identical ones are all recorded', async () => {
    const { tenantId, token, contact } = await tenantWithContact();

    await svc.record('by-contact-id', token, [
      event(contact.id, undefined),
      event(contact.id, undefined),
    ]);

    expect((await storedState(svc.pool, tenantId)).events).toHaveLength(2);
  });
});

describe('across requests', () => {
  it('when the same dedupKey is sent again, then it is recorded once and both answers are 202 with their counts', async () => {
    const { tenantId, token, contact } = await tenantWithContact();

    const first = await svc.record('by-contact-id', token, event(contact.id, 'order-1'));
    const again = await svc.record('by-contact-id', token, [
      event(contact.id, 'order-1'),
      event(contact.id, 'order-2'),
    ]);

    expect(await first.json()).toStrictEqual({ accepted: 1 });
    expect(await again.json()).toStrictEqual({ accepted: 2 });
    const { events, claims } = await storedState(svc.pool, tenantId);
    expect(events.map((e) => e.dedup_key).sort()).toEqual(['order-1', 'order-2']);
    expect(claims.map((c) => c.dedup_key).sort()).toEqual(
      ['order-1', 'order-2'].map(hashDedupKey).sort(),
    );
  });

  it('when the same dedupKey comes through different routes, then it is recorded once (per Tenant, across routes)', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    await svc.contacts.createOrganization(tenantId, 'acme');

    const answers = [
      await svc.record('by-contact-id', token, event(contact.id, 'shared')),
      await svc.record('by-external-id', token, {
        contactExternalId: 'user-1',
        eventName: 'x',
        occurredAt: OCCURRED,
        dedupKey: 'shared',
      }),
      await svc.record('by-email', token, {
        contactEmail: contact.email,
        eventName: 'x',
        occurredAt: OCCURRED,
        dedupKey: 'shared',
      }),
      await svc.record('by-organization', token, {
        organizationExternalId: 'acme',
        eventName: 'x',
        occurredAt: OCCURRED,
        dedupKey: 'shared',
      }),
    ];

    expect(answers.map((r) => r.status)).toEqual([202, 202, 202, 202]);
    const { events } = await storedState(svc.pool, tenantId);
    expect(events).toHaveLength(1);
    expect(events[0]!.organization_external_id).toBeNull();
  });

  it('when two Tenants use the same dedupKey, then each records its own', async () => {
    const a = await tenantWithContact();
    const b = await tenantWithContact();

    await svc.record('by-contact-id', a.token, event(a.contact.id, 'same'));
    await svc.record('by-contact-id', b.token, event(b.contact.id, 'same'));

    expect((await storedState(svc.pool, a.tenantId)).events).toHaveLength(1);
    expect((await storedState(svc.pool, b.tenantId)).events).toHaveLength(1);
  });

  it('when a key is recorded, then the fast path remembers it for what is left of the 60 s window', async () => {
    const { tenantId, token, contact } = await tenantWithContact();

    await svc.record('by-contact-id', token, event(contact.id, 'remembered'));

    const { events } = await storedState(svc.pool, tenantId);
    expect(await cached(svc, tenantId, 'remembered')).toBe(events[0]!.id);
    const ttl = await svc.redis.pTTL(dedupCacheKey(tenantId, 'remembered'));
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('when the fast path lost the key, then PostgreSQL still knows the duplicate', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    await svc.record('by-contact-id', token, event(contact.id, 'k'));
    await svc.redis.del(dedupCacheKey(tenantId, 'k'));

    const res = await svc.record('by-contact-id', token, event(contact.id, 'k'));

    expect(await res.json()).toStrictEqual({ accepted: 1 });
    expect((await storedState(svc.pool, tenantId)).events).toHaveLength(1);
  });

  it('when PostgreSQL finds some keys of a request claimed, then exactly the others are written, each with its own message', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    await svc.record('by-contact-id', token, [event(contact.id, 'a'), event(contact.id, 'c')]);
    await svc.redis.del([dedupCacheKey(tenantId, 'a'), dedupCacheKey(tenantId, 'c')]);

    const res = await svc.record('by-contact-id', token, [
      { ...event(contact.id, 'a', 'again'), properties: { n: 1 } },
      { ...event(contact.id, 'b', 'new'), properties: { n: 2 } },
      { ...event(contact.id, 'c', 'again'), properties: { n: 3 } },
      { ...event(contact.id, undefined, 'keyless'), properties: { n: 4 } },
    ]);

    expect(await res.json()).toStrictEqual({ accepted: 4 });
    const { events, outbox } = await storedState(svc.pool, tenantId);
    const recorded = events.filter((e) => e.event_name !== 'x');
    expect(recorded.map((e) => [e.event_name, e.dedup_key]).sort()).toEqual([
      ['keyless', null],
      ['new', 'b'],
    ]);
    const messages = outbox.map((m) => JSON.parse(m.value));
    const fresh = messages.filter((m) => m.eventName !== 'x');
    expect(fresh.map((m) => [m.eventId, m.properties]).sort()).toEqual(
      recorded.map((e) => [e.id, JSON.parse(e.properties ?? 'null')]).sort(),
    );
  });
  it('when the fast path knows the key, then the Event is skipped without asking PostgreSQL', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    // Only committed claims are ever written there; this one stands for such a claim.
    await svc.redis.set(dedupCacheKey(tenantId, 'known'), randomUUID(), {
      expiration: { type: 'PX', value: 10_000 },
    });

    const res = await svc.record('by-contact-id', token, [
      event(contact.id, 'known'),
      event(contact.id, 'new'),
    ]);

    expect(await res.json()).toStrictEqual({ accepted: 2 });
    const { events, claims } = await storedState(svc.pool, tenantId);
    expect(events.map((e) => e.dedup_key)).toEqual(['new']);
    expect(claims.map((c) => c.dedup_key)).toEqual([hashDedupKey('new')]);
  });
});

describe('the 60 s window', () => {
  it('when the claim is older than 60 s (and the fast path has forgotten it), then the key is recorded again', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    await svc.record('by-contact-id', token, event(contact.id, 'k', 'first'));
    await svc.pool.query(
      `update dedup_claims set claimed_at = claimed_at - interval '61 seconds' where tenant_id = $1`,
      [tenantId],
    );
    await svc.redis.del(dedupCacheKey(tenantId, 'k'));

    const res = await svc.record('by-contact-id', token, event(contact.id, 'k', 'second'));

    expect(res.status).toBe(202);
    const { events, claims } = await storedState(svc.pool, tenantId);
    expect(events.map((e) => e.event_name).sort()).toEqual(['first', 'second']);
    const second = events.find((e) => e.event_name === 'second')!;
    // The claim now belongs to the new Event, and its window starts again.
    expect(claims).toEqual([
      { dedup_key: hashDedupKey('k'), event_id: second.id, claimed_at: expect.any(Date) },
    ]);
    expect(Date.now() - claims[0]!.claimed_at.getTime()).toBeLessThan(10_000);
    expect(await cached(svc, tenantId, 'k')).toBe(second.id);
  });

  it('when the claim is 59 s old, then it still holds', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    await svc.record('by-contact-id', token, event(contact.id, 'k'));
    await svc.pool.query(
      `update dedup_claims set claimed_at = claimed_at - interval '59 seconds' where tenant_id = $1`,
      [tenantId],
    );
    await svc.redis.del(dedupCacheKey(tenantId, 'k'));

    await svc.record('by-contact-id', token, event(contact.id, 'k'));

    expect((await storedState(svc.pool, tenantId)).events).toHaveLength(1);
  });

  it('when the window (shortened for the test) passes, then both PostgreSQL and the fast path let the key through again', async () => {
    const short = await startEventsService({ dedupWindowMs: 1_500 });
    try {
      const { tenantId, token, contact } = await tenantWithContact(short);
      await short.record('by-contact-id', token, event(contact.id, 'k'));
      await short.record('by-contact-id', token, event(contact.id, 'k'));
      expect((await storedState(short.pool, tenantId)).events).toHaveLength(1);

      await sleep(1_700);
      expect(await cached(short, tenantId, 'k')).toBeNull();
      await short.record('by-contact-id', token, event(contact.id, 'k'));

      expect((await storedState(short.pool, tenantId)).events).toHaveLength(2);
    } finally {
      await short.close();
    }
  });
});

describe('failed requests claim nothing', () => {
  it('when a request is refused with 422 because of another Event, then its keys stay free: the fixed request records them', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    const refused = await svc.record('by-contact-id', token, [
      event(contact.id, 'k-1'),
      event(randomUUID(), 'k-2'),
    ]);
    expect(refused.status).toBe(422);
    expect((await storedState(svc.pool, tenantId)).claims).toEqual([]);
    expect(await cached(svc, tenantId, 'k-1')).toBeNull();

    const fixed = await svc.record('by-contact-id', token, [event(contact.id, 'k-1')]);

    expect(await fixed.json()).toStrictEqual({ accepted: 1 });
    const { events, claims } = await storedState(svc.pool, tenantId);
    expect(events.map((e) => e.dedup_key)).toEqual(['k-1']);
    expect(claims.map((c) => c.dedup_key)).toEqual([hashDedupKey('k-1')]);
  });

  it('when a request is refused with 400, then its keys stay free', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    await svc.record('by-contact-id', token, [
      event(contact.id, 'k'),
      { ...event(contact.id, 'j'), occurredAt: 'x' },
    ]);

    await svc.record('by-contact-id', token, [event(contact.id, 'k')]);

    expect((await storedState(svc.pool, tenantId)).events).toHaveLength(1);
  });

  it('when a request fails inside its transaction, then its claims roll back with it', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    // A trigger makes the Events' insert fail after the claims were taken.
    const fn = `fail_${tenantId.replaceAll('-', '')}`;
    await svc.pool.query(`create function ${fn}() returns trigger language plpgsql as $$
      begin
        if new.tenant_id = '${tenantId}' and new.event_name = 'explode' then
          raise exception 'test failure';
        end if;
        return new;
      end $$`);
    await svc.pool.query(
      `create trigger ${fn} before insert on events for each row execute function ${fn}()`,
    );
    try {
      const failed = await svc.record('by-contact-id', token, [
        event(contact.id, 'k'),
        event(contact.id, 'j', 'explode'),
      ]);
      expect(failed.status).toBe(500);
      expect(await storedState(svc.pool, tenantId)).toStrictEqual({
        events: [],
        claims: [],
        names: [],
        outbox: [],
      });
      expect(await cached(svc, tenantId, 'k')).toBeNull();
    } finally {
      await svc.pool.query(`drop trigger ${fn} on events`);
      await svc.pool.query(`drop function ${fn}()`);
    }

    await svc.record('by-contact-id', token, [event(contact.id, 'k')]);

    expect((await storedState(svc.pool, tenantId)).events).toHaveLength(1);
  });
});

describe('concurrent requests', () => {
  it('when many requests with one dedupKey race, through every Contact route, then exactly one is recorded (30 rounds)', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    const bodies = (key: string) =>
      [
        ['by-contact-id', event(contact.id, key)],
        [
          'by-external-id',
          { contactExternalId: 'user-1', eventName: 'x', occurredAt: OCCURRED, dedupKey: key },
        ],
        [
          'by-email',
          { contactEmail: contact.email, eventName: 'x', occurredAt: OCCURRED, dedupKey: key },
        ],
      ] as const;

    for (let round = 0; round < 30; round += 1) {
      const key = `race-${round}`;
      const racers = Array.from({ length: 8 }, (_, i) => bodies(key)[i % 3]!);
      const answers = await Promise.all(
        racers.map(([route, body]) => svc.record(route, token, body)),
      );
      expect(answers.map((r) => r.status)).toEqual(Array(8).fill(202));
    }

    const { events, claims, outbox } = await storedState(svc.pool, tenantId);
    const perKey = new Map<string, number>();
    for (const e of events) perKey.set(e.dedup_key!, (perKey.get(e.dedup_key!) ?? 0) + 1);
    expect(perKey.size).toBe(30);
    expect([...perKey.values()].every((n) => n === 1)).toBe(true);
    expect(claims).toHaveLength(30);
    expect(outbox).toHaveLength(30);
  });

  it('when two batches share keys in opposite orders, then they never deadlock and each key is recorded once (20 rounds)', async () => {
    const { tenantId, token, contact } = await tenantWithContact();
    for (let round = 0; round < 20; round += 1) {
      const keys = Array.from({ length: 6 }, (_, i) => `r${round}-k${i}`);
      const forward = keys.map((k) => event(contact.id, k));
      const backward = [...keys].reverse().map((k) => event(contact.id, k));

      const answers = await Promise.all([
        svc.record('by-contact-id', token, forward),
        svc.record('by-contact-id', token, backward),
        svc.record('by-contact-id', token, forward),
      ]);

      expect(answers.map((r) => r.status)).toEqual([202, 202, 202]);
    }
    const { events } = await storedState(svc.pool, tenantId);
    expect(events).toHaveLength(120);
    expect(new Set(events.map((e) => e.dedup_key)).size).toBe(120);
  });
});
