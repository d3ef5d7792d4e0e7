// The policies (rate budgets, suspension) when Redis is lost: a flushed Redis forgets budgets and
// the subscription mirror, and PostgreSQL (through the billing service) still decides who is
// suspended; a stopped Redis leaves requests served (budgets fail open) while suspension and
// revocation keep holding. Stops and starts the stack's Redis: run alone.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createRedis, waitForRedis } from '@herald/redis';
import {
  admin,
  call,
  event,
  newContact,
  newFixture,
  record,
  restore,
  stack,
  stop,
  type Contact,
  type Fixture,
} from './support.js';

const REDIS_URL = process.env.REDIS_URL ?? stack.redisUrl;

beforeAll(restore);
afterAll(restore);

async function setPayments(tenantId: string, outcome: 'failed' | 'updated') {
  const times = outcome === 'failed' ? 3 : 1;
  const route = outcome === 'failed' ? 'payment-failures' : 'payment-details';
  for (let i = 0; i < times; i += 1) {
    const res = await admin('POST', `/tenants/${tenantId}/billing/${route}`);
    expect(res.status).toBe(200);
  }
}

async function writeStatus(f: Fixture, contact: Contact): Promise<number> {
  const res = await record(f, 'by-contact-id', event('by-contact-id', f, contact));
  await res.arrayBuffer();
  return res.status;
}

/** Polls until `check` holds; fails after `withinMs`. Returns how long it took. */
async function within(withinMs: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  for (;;) {
    // When the check that passed was sent: the change held by then, whatever its answer took.
    const sent = Date.now() - started;
    if (await check()) return sent;
    if (Date.now() - started > withinMs) throw new Error(`not within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('Redis flushed', () => {
  it('when Redis is flushed, then a suspended Tenant is still refused on every service and the budgets start again', async () => {
    const f = await newFixture('Resilience: flushed and suspended');
    const contact = await newContact(f);
    await setPayments(f.tenantId, 'failed');
    expect(await writeStatus(f, contact)).toBe(402);

    const redis = createRedis({ url: REDIS_URL });
    await waitForRedis(redis);
    try {
      await redis.flushAll();
    } finally {
      await redis.close();
    }

    expect(await writeStatus(f, contact)).toBe(402);
    const upsert = await call('PUT', `/v1/contacts/${contact.externalId}`, f.token, {
      email: contact.email,
    });
    expect(upsert.status).toBe(402);
    const read = await call('GET', `/v1/contacts/by-id/${contact.id}`, f.token);
    expect(read.status).toBe(200);
    expect(read.headers.get('ratelimit-limit')).toBe('200');
  });
});

describe('Redis stopped', () => {
  it('when Redis is stopped, then requests are served without budgets, suspension still holds, and once it is back the mirror catches up', async () => {
    const active = await newFixture('Resilience: Redis down, active');
    const suspended = await newFixture('Resilience: Redis down, suspended');
    const activeContact = await newContact(active);
    const suspendedContact = await newContact(suspended);
    await setPayments(suspended.tenantId, 'failed');

    await stop('redis');
    try {
      // Budgets fail open: served, without RateLimit headers.
      const served = await record(
        active,
        'by-contact-id',
        event('by-contact-id', active, activeContact),
      );
      expect(served.status).toBe(202);
      expect(served.headers.get('ratelimit-limit')).toBeNull();
      // Suspension comes from billing (PostgreSQL) while the mirror is unreachable.
      expect(await writeStatus(suspended, suspendedContact)).toBe(402);

      // A change made while Redis is down holds within a second.
      await setPayments(suspended.tenantId, 'updated');
      const tookMs = await within(
        1_000,
        async () => (await writeStatus(suspended, suspendedContact)) === 202,
      );
      expect(tookMs).toBeLessThanOrEqual(1_000);
      await setPayments(active.tenantId, 'failed');
      await within(1_000, async () => (await writeStatus(active, activeContact)) === 402);
    } finally {
      await restore();
    }

    // Redis may come back with the mirror it had before (append-only file): billing rewrites it
    // once it sees Redis again.
    await within(5_000, async () => (await writeStatus(suspended, suspendedContact)) === 202);
    expect(await writeStatus(active, activeContact)).toBe(402);
    const read = await call('GET', `/v1/contacts/by-id/${activeContact.id}`, active.token);
    expect(read.headers.get('ratelimit-limit')).toBe('200');
  });
});
