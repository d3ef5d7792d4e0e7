// Redis is the dedup fast path only: with it away, or hanging, every
// Event is still recorded exactly once inside the window, concurrent duplicates included, and
// answers stay fast.
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { createRedis } from '@herald/redis';
import { redisDedupCache } from '../../src/recording/clients/redis-dedup-cache.js';
import {
  startEventsService,
  storedState,
  uniqueEmail,
  type TestEventsService,
} from '../support.js';

const OCCURRED = '2026-03-04T05:06:07.123Z';

/**
 * A Redis that completes the client's connection handshake (every command but the data ones gets
 * +OK) and then never answers MGET, GET, SET or a script: a Redis that hangs.
 */
const HANGS = new Set(['MGET', 'GET', 'SET', 'EVALSHA', 'EVAL']);

async function startHangingRedis(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('data', (chunk) => {
      // Each command is a RESP array whose first bulk string is its name.
      for (const [, name] of chunk
        .toString('latin1')
        .matchAll(/\*\d+\r\n\$\d+\r\n([A-Za-z]+)\r\n/g)) {
        const command = name!.toUpperCase();
        if (!HANGS.has(command)) socket.write('+OK\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function describeWithoutRedis(what: string, redisUrl: () => string) {
  describe(what, () => {
    let svc: TestEventsService;
    beforeAll(async () => {
      svc = await startEventsService({ redisUrl: redisUrl(), poolMax: 20 });
    });
    afterAll(() => svc.close());

    async function tenantWithContact() {
      const tenant = svc.newTenant();
      const email = uniqueEmail();
      const contact = await svc.contacts.createContact(tenant.tenantId, {
        externalId: 'user-1',
        email,
      });
      return { ...tenant, contact, email };
    }

    const event = (contactId: string, dedupKey?: string) => ({
      contactId,
      eventName: 'x',
      occurredAt: OCCURRED,
      ...(dedupKey === undefined ? {} : { dedupKey }),
    });

    async function timed(request: Promise<Response>) {
      const started = Date.now();
      const res = await request;
      return { res, ms: Date.now() - started };
    }

    it('when Events are recorded, then 202 at once and every one is stored', async () => {
      const { tenantId, token, contact } = await tenantWithContact();

      const { res, ms } = await timed(
        svc.record('by-contact-id', token, [event(contact.id, 'a'), event(contact.id)]),
      );

      expect(res.status).toBe(202);
      expect(await res.json()).toStrictEqual({ accepted: 2 });
      expect(ms).toBeLessThan(1_000);
      const { events, claims, outbox } = await storedState(svc.pool, tenantId);
      expect(events).toHaveLength(2);
      expect(claims).toHaveLength(1);
      expect(outbox).toHaveLength(2);
    });

    it('when a dedupKey is sent again, within one request and across requests and routes, then it is recorded once', async () => {
      const { tenantId, token, contact, email } = await tenantWithContact();

      const answers = [
        await timed(
          svc.record('by-contact-id', token, [event(contact.id, 'k'), event(contact.id, 'k')]),
        ),
        await timed(svc.record('by-contact-id', token, event(contact.id, 'k'))),
        await timed(
          svc.record('by-email', token, {
            contactEmail: email,
            eventName: 'x',
            occurredAt: OCCURRED,
            dedupKey: 'k',
          }),
        ),
      ];

      expect(answers.map(({ res }) => res.status)).toEqual([202, 202, 202]);
      expect(Math.max(...answers.map(({ ms }) => ms))).toBeLessThan(1_000);
      expect((await storedState(svc.pool, tenantId)).events).toHaveLength(1);
    });

    it('when concurrent requests race with one dedupKey, then exactly one is recorded (25 rounds)', async () => {
      const { tenantId, token, contact } = await tenantWithContact();

      for (let round = 0; round < 25; round += 1) {
        const answers = await Promise.all(
          Array.from({ length: 8 }, () =>
            timed(svc.record('by-contact-id', token, event(contact.id, `race-${round}`))),
          ),
        );
        expect(answers.map(({ res }) => res.status)).toEqual(Array(8).fill(202));
        expect(Math.max(...answers.map(({ ms }) => ms))).toBeLessThan(1_000);
      }

      const { events } = await storedState(svc.pool, tenantId);
      expect(events).toHaveLength(25);
      expect(new Set(events.map((e) => e.dedup_key)).size).toBe(25);
    });

    it('when the window has passed for a claim, then the key is recorded again', async () => {
      const { tenantId, token, contact } = await tenantWithContact();
      await svc.record('by-contact-id', token, event(contact.id, 'k'));
      await svc.pool.query(
        `update dedup_claims set claimed_at = claimed_at - interval '61 seconds' where tenant_id = $1`,
        [tenantId],
      );

      await svc.record('by-contact-id', token, event(contact.id, 'k'));

      expect((await storedState(svc.pool, tenantId)).events).toHaveLength(2);
    });
  });
}

// Nothing listens there: the client fails every command at once while it keeps reconnecting.
describeWithoutRedis('when Redis is down (a closed port)', () => 'redis://127.0.0.1:9');

// Connected, but the dedup commands never come back: one is given up after its timeout, then
// Redis is left alone for a while.
let hanging: Awaited<ReturnType<typeof startHangingRedis>>;
beforeAll(async () => {
  hanging = await startHangingRedis();
});
afterAll(() => hanging.close());
describeWithoutRedis('when Redis hangs (connected, never answers)', () => hanging.url);

describe('the fast path while Redis fails', () => {
  it('when every call fails, then it answers "unknown", counts nothing as claimed and logs once a minute at most', async () => {
    const redis = createRedis({ url: 'redis://127.0.0.1:9' });
    const warnings: unknown[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
    try {
      const cache = redisDedupCache(redis, { logger });
      for (let i = 0; i < 5; i += 1) {
        expect(await cache.claimed(randomUUID(), ['a', 'b'])).toEqual(new Set());
        await cache.remember(randomUUID(), [
          { dedupKey: 'a', eventId: randomUUID(), remainingMs: 1000 },
        ]);
      }
      expect(warnings).toHaveLength(1);
      expect(String(warnings[0])).toMatch(/PostgreSQL alone decides/);
    } finally {
      redis.destroy();
    }
  });

  it('when a call hangs, then it is given up after the timeout and Redis is left alone for the cooldown', async () => {
    const redis = createRedis({ url: hanging.url });
    const took = async (call: () => Promise<unknown>) => {
      const started = performance.now();
      await call();
      return performance.now() - started;
    };
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const cache = redisDedupCache(redis, {
        logger: pino({ level: 'silent' }),
        timeoutMs: 100,
        cooldownMs: 400,
      });
      const lookup = () => cache.claimed(randomUUID(), ['a']);

      const timedOut = await took(async () => expect(await lookup()).toEqual(new Set()));
      const resting = await took(lookup);
      await new Promise((resolve) => setTimeout(resolve, 450));
      const retried = await took(lookup);

      expect(timedOut).toBeGreaterThanOrEqual(90);
      expect(timedOut).toBeLessThan(1_000);
      // Under the 100 ms a call to the hanging Redis would wait: the cache did not ask it. (A
      // tighter bound would measure the machine: one GC pause of a loaded test worker is 20 ms.)
      expect(resting).toBeLessThan(90);
      expect(retried).toBeGreaterThanOrEqual(90);
      expect(retried).toBeLessThan(1_000);
    } finally {
      redis.destroy();
    }
  });
});
