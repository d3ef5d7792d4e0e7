// The resend guarantee against the real stack: a TCP proxy in front of the ingress loses an
// answer after the service committed, holds one past the client's timeout, answers 429s and 503s
// by itself, or turns a token away as expired; a real rate limit is exhausted. In every case
// each Event is recorded exactly once, counted in the events service's database.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Pool } from '@herald/db';
import { HeraldClient, type EventRoute, type FetchLike } from '../../src/index.js';
import {
  startProxy,
  type Decision,
  type Handled,
  type ProxiedRequest,
  type Proxy,
} from '../proxy.js';
import {
  eventsDatabase,
  INGRESS,
  newOrganization,
  newSecretKey,
  newTenant,
  recordedByDedupKey,
  recordedInTenant,
  sleep,
  type Key,
} from '../support.js';

const LONG = 180_000;

let db: Pool;
beforeAll(() => {
  db = eventsDatabase();
});
afterAll(async () => {
  await db.end();
});

let proxy: Proxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

const isEvents = (request: ProxiedRequest) =>
  request.method === 'POST' && request.path.startsWith('/v1/events/');
const isExchange = (request: ProxiedRequest) => request.path === '/v1/token';
const eventRequests = (handled: Handled[]) => handled.filter(isEvents);

/** A Tenant with a secret key and one Contact, made directly against the ingress. */
async function fixture(name: string) {
  const tenantId = await newTenant(name);
  const key = await newSecretKey(tenantId);
  const direct = clientFor(INGRESS, key);
  const externalId = `user-${randomUUID()}`;
  const { contact } = await direct.contacts.upsert(externalId, {
    email: `${externalId.slice(0, 13)}@example.com`,
  });
  return { tenantId, key, contact, externalId };
}

/** Generous limits: the machine is shared and may be slow; short backoff steps. */
function clientFor(
  baseUrl: string,
  key: Key,
  options: Partial<{ timeoutMs: number; fetch: FetchLike }> = {},
) {
  return new HeraldClient({
    baseUrl,
    clientId: key.clientId,
    secret: key.secret!,
    timeoutMs: 30_000,
    deadlineMs: 150_000,
    maxAttempts: 30,
    baseDelayMs: 50,
    maxDelayMs: 1_000,
    ...options,
  });
}

/** Waits until `check` holds, polling; fails after `ms`. */
async function eventually(check: () => boolean, ms = 60_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await sleep(50);
  }
}

describe('a lost answer', () => {
  it(
    'when the connection drops after the service committed the first Event request, then the client resends it and each Event is recorded exactly once',
    async () => {
      const { tenantId, key, externalId } = await fixture('SDK dropped answer');
      let dropped = false;
      proxy = await startProxy(INGRESS, (request): Decision => {
        if (isEvents(request) && !dropped) {
          dropped = true;
          return { action: 'drop-after-answer' };
        }
        return { action: 'forward' };
      });
      const client = clientFor(proxy.url, key);
      const events = ['Order Placed', 'Order Paid', 'Order Shipped'].map((eventName) => ({
        contactExternalId: externalId,
        eventName,
        occurredAt: new Date(),
      }));

      await expect(client.events.byExternalId(events)).resolves.toStrictEqual({ accepted: 3 });

      const sent = eventRequests(proxy.handled);
      expect(sent.map((r) => r.decision)).toStrictEqual(['drop-after-answer', 'forward']);
      // The first request was answered upstream (committed) and its answer never reached us.
      expect(sent[0]!.upstreamStatus).toBe(202);
      expect(sent[1]!.upstreamStatus).toBe(202);
      // The resend is the very same request: the same dedupKeys, byte for byte.
      expect(sent[1]!.body).toBe(sent[0]!.body);
      const keys = (JSON.parse(sent[0]!.body) as { dedupKey: string }[]).map((e) => e.dedupKey);
      expect(new Set(keys).size).toBe(3);
      expect([...(await recordedByDedupKey(db, tenantId, keys)).values()]).toStrictEqual([1, 1, 1]);
      expect(await recordedInTenant(db, tenantId)).toBe(3);
    },
    LONG,
  );

  it(
    'when the answer comes after the client timed out, then the resend records nothing twice',
    async () => {
      const { tenantId, key, contact } = await fixture('SDK late answer');
      let delayed = false;
      proxy = await startProxy(INGRESS, (request): Decision => {
        if (isEvents(request) && !delayed) {
          delayed = true;
          return { action: 'delay-answer', ms: 20_000 };
        }
        return { action: 'forward' };
      });
      const client = clientFor(proxy.url, key, { timeoutMs: 4_000 });

      await expect(
        client.events.byContactId({
          contactId: contact.id,
          eventName: 'Late',
          occurredAt: new Date(),
        }),
      ).resolves.toStrictEqual({ accepted: 1 });

      const sent = eventRequests(proxy.handled);
      expect(sent.length).toBeGreaterThanOrEqual(2);
      expect(new Set(sent.map((r) => r.body)).size).toBe(1);
      // The held request was committed too (its answer is known once the service gave it).
      await eventually(() => sent[0]!.upstreamStatus !== undefined);
      expect(sent[0]!.upstreamStatus).toBe(202);
      const { dedupKey } = JSON.parse(sent[0]!.body) as { dedupKey: string };
      expect((await recordedByDedupKey(db, tenantId, [dedupKey])).get(dedupKey)).toBe(1);
      expect(await recordedInTenant(db, tenantId)).toBe(1);
    },
    LONG,
  );
});

describe('answers that ask for a resend', () => {
  it(
    'when a 429 storm with Retry-After meets the tracker, then it waits it out and records every Event once',
    async () => {
      const { tenantId, key, externalId } = await fixture('SDK 429 storm');
      const STORM = 3;
      let limited = 0;
      proxy = await startProxy(INGRESS, (request): Decision => {
        if (isEvents(request) && limited < STORM) {
          limited += 1;
          return {
            action: 'answer',
            status: 429,
            headers: { 'Retry-After': '1' },
            body: { code: 'rate_limited', message: 'the write budget is used up' },
          };
        }
        return { action: 'forward' };
      });
      const errors: Error[] = [];
      const tracker = clientFor(proxy.url, key).tracker({
        flushAt: 100,
        onError: (error) => errors.push(error),
      });
      const keys = Array.from({ length: 10 }, (_, i) =>
        tracker.track('by-external-id', { contactExternalId: externalId, eventName: `Step ${i}` }),
      );
      await tracker.close();

      expect(errors).toStrictEqual([]);
      const sent = eventRequests(proxy.handled);
      expect(sent.map((r) => r.decision)).toStrictEqual([
        ...Array<string>(STORM).fill('answer'),
        'forward',
      ]);
      expect(new Set(sent.map((r) => r.body)).size).toBe(1);
      expect([...(await recordedByDedupKey(db, tenantId, keys)).values()]).toStrictEqual(
        keys.map(() => 1),
      );
      expect(await recordedInTenant(db, tenantId)).toBe(10);
    },
    LONG,
  );

  it(
    'when the service answers 503 and 500, then the request is resent; a 400 is not',
    async () => {
      const { tenantId, key, contact } = await fixture('SDK 5xx');
      const failures = [503, 500];
      proxy = await startProxy(INGRESS, (request): Decision => {
        const status = isEvents(request) ? failures.shift() : undefined;
        return status
          ? {
              action: 'answer',
              status,
              headers: status === 503 ? { 'Retry-After': '1' } : {},
              body: {
                code: status === 503 ? 'service_unavailable' : 'internal_error',
                message: 'm',
              },
            }
          : { action: 'forward' };
      });
      const client = clientFor(proxy.url, key);
      const dedupKey = `5xx-${randomUUID()}`;
      await expect(
        client.events.byContactId({
          contactId: contact.id,
          eventName: 'x',
          occurredAt: new Date(),
          dedupKey,
        }),
      ).resolves.toStrictEqual({ accepted: 1 });
      expect(eventRequests(proxy.handled).map((r) => r.decision)).toStrictEqual([
        'answer',
        'answer',
        'forward',
      ]);
      expect((await recordedByDedupKey(db, tenantId, [dedupKey])).get(dedupKey)).toBe(1);

      const before = proxy.handled.length;
      await expect(
        client.events.byContactId({ contactId: contact.id, eventName: '', occurredAt: 'never' }),
      ).rejects.toMatchObject({ status: 400, attempts: 1 });
      expect(eventRequests(proxy.handled.slice(before))).toHaveLength(1);
    },
    LONG,
  );
});

describe('the access token', () => {
  it(
    'when the token expires in the middle of a batch, then it is renewed exactly once and every Event is recorded once',
    async () => {
      const { tenantId, key, contact, externalId } = await fixture('SDK token expiry');
      const organization = await newOrganization(tenantId, `org-${randomUUID()}`);
      // The proxy lets the first token through for two Event requests, then treats it as
      // expired: 401 unauthenticated for every later request that carries it.
      let firstToken: string | undefined;
      let passedWithFirst = 0;
      proxy = await startProxy(INGRESS, (request): Decision => {
        if (!isEvents(request)) return { action: 'forward' };
        const authorization = request.headers.authorization;
        firstToken ??= authorization;
        if (authorization === firstToken && ++passedWithFirst > 2) {
          return {
            action: 'answer',
            status: 401,
            headers: { 'WWW-Authenticate': 'Bearer realm="herald", error="invalid_token"' },
            body: { code: 'unauthenticated', message: 'the access token expired' },
          };
        }
        return { action: 'forward' };
      });
      const errors: Error[] = [];
      const client = clientFor(proxy.url, key);
      const tracker = client.tracker({ flushAt: 5, onError: (error) => errors.push(error) });
      const identity: Record<EventRoute, Record<string, string>> = {
        'by-contact-id': { contactId: contact.id },
        'by-external-id': { contactExternalId: externalId },
        'by-email': { contactEmail: contact.email },
        'by-organization': { organizationExternalId: organization, contactId: contact.id },
      };
      const keys: string[] = [];
      for (let i = 0; i < 10; i += 1) {
        for (const route of Object.keys(identity) as EventRoute[]) {
          keys.push(tracker.track(route, { ...identity[route], eventName: `Batch ${i}` }));
        }
      }
      await tracker.close();

      expect(errors).toStrictEqual([]);
      expect(proxy.handled.filter(isExchange)).toHaveLength(2); // the first token, one renewal
      expect(client.tokens.exchanges).toBe(2);
      const sent = eventRequests(proxy.handled);
      const refused = sent.filter((r) => r.decision === 'answer');
      expect(refused.length).toBeGreaterThanOrEqual(1);
      // After the renewal every request carries the one new token.
      const later = sent.filter((r) => r.headers.authorization !== firstToken);
      expect(new Set(later.map((r) => r.headers.authorization)).size).toBe(1);
      // Each refused batch went out again, the same bytes.
      for (const r of refused) {
        expect(later.some((again) => again.body === r.body && again.path === r.path)).toBe(true);
      }
      expect([...(await recordedByDedupKey(db, tenantId, keys)).values()]).toStrictEqual(
        keys.map(() => 1),
      );
      expect(await recordedInTenant(db, tenantId)).toBe(40);
    },
    LONG,
  );
});

describe('a real rate limit', () => {
  it(
    'when the key has used its write budget, then the client waits out the real 429s and records every Event once',
    async () => {
      const { tenantId, key, externalId } = await fixture('SDK real 429');
      // What the client is answered, observed on the way (not changed). Once it met a 429 the
      // other holder of the key stops spending, so the client's resend finds budget again.
      const statuses: number[] = [];
      let stop = false;
      const observed: FetchLike = async (input, init) => {
        const response = await fetch(input, init);
        if (input.includes('/v1/events/')) {
          statuses.push(response.status);
          if (response.status === 429) stop = true;
        }
        return response;
      };
      const client = clientFor(INGRESS, key, { fetch: observed });
      await client.contacts.get(externalId); // the token first: the exchange is not budgeted

      // Another holder of the same key spends the budget (burst 1,000, 100 a second) with
      // invalid Events (charged, then refused with a 400: nothing recorded), and keeps it spent.
      const token = await clientFor(INGRESS, key).tokens.token();
      let spent = 0;
      let limitedSeen = false;
      const hammerUntil = Date.now() + 150_000;
      const hammer = Promise.all(
        Array.from({ length: 16 }, async () => {
          while (!stop && Date.now() < hammerUntil && spent < 40_000) {
            spent += 1;
            const res = await fetch(`${INGRESS}/v1/events/by-contact-id`, {
              method: 'POST',
              headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
              body: '{}',
            });
            await res.arrayBuffer();
            if (res.status === 429) limitedSeen = true;
          }
        }),
      );
      try {
        await eventually(() => limitedSeen || stop, 120_000);
        // Send until the client has met a 429 (the very first send almost surely does).
        const keys: string[] = [];
        for (let i = 0; i < 20 && !statuses.includes(429); i += 1) {
          const batch = Array.from({ length: 5 }, (_, j) => ({
            contactExternalId: externalId,
            eventName: `Limited ${i}.${j}`,
            occurredAt: new Date(),
            dedupKey: `limited-${randomUUID()}`,
          }));
          keys.push(...batch.map((e) => e.dedupKey));
          await expect(client.events.byExternalId(batch)).resolves.toStrictEqual({ accepted: 5 });
        }
        stop = true;
        expect(statuses).toContain(429);
        expect(statuses.at(-1)).toBe(202);
        expect([...(await recordedByDedupKey(db, tenantId, keys)).values()]).toStrictEqual(
          keys.map(() => 1),
        );
        expect(await recordedInTenant(db, tenantId)).toBe(keys.length);
      } finally {
        stop = true;
        await hammer;
      }
    },
    LONG,
  );
});
