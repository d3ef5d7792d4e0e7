// Rate limits: two budgets per API key, through the ingress with the production
// settings (reads 100/s burst 200, writes 100/s burst 1,000). The bounds below come from the
// clock of the test itself: at most burst + refill × elapsed requests can pass.
import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { accessToken, admin, call, exchange, basic, newKey, newTenant } from './support.js';

const READ = { burst: 200, refillPerSecond: 100 };
const WRITE = { burst: 1_000, refillPerSecond: 100 };

/**
 * Sends requests, `concurrency` at a time, until the first 429 (the requests in flight then
 * finish), so the budget is spent however fast or slow the machine is. Answers in order sent,
 * with send and receive times.
 */
async function untilLimited(concurrency: number, send: () => Promise<Response>, max = 10_000) {
  const answers: { res: Response; body: string; sentAt: number; receivedAt: number }[] = [];
  let limitedSeen = false;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (!limitedSeen && answers.length < max) {
        const sentAt = performance.now();
        const res = await send();
        const body = await res.text();
        answers.push({ res, body, sentAt, receivedAt: performance.now() });
        if (res.status === 429) limitedSeen = true;
      }
    }),
  );
  const elapsedS = (performance.now() - started) / 1000;
  const passed = answers.filter((a) => a.res.status !== 429);
  const limited = answers.filter((a) => a.res.status === 429);
  return { answers, passed, limited, elapsedS };
}

const missingContact = (token: string) => () =>
  call('GET', `/v1/contacts/by-id/${randomUUID()}`, token);
// An empty Event: 400 after the budget was charged, without touching a database.
const invalidEvent = (token: string) => () => call('POST', '/v1/events/by-contact-id', token, {});

describe('the read budget (GET)', () => {
  it('when a key sends far more than its burst at once, then the burst plus at most the refill pass and the rest get 429 with Retry-After', async () => {
    const token = await accessToken(await newTenant(), ['contacts:read']);
    const { answers, passed, limited, elapsedS } = await untilLimited(20, missingContact(token));

    expect(passed.length).toBeGreaterThanOrEqual(READ.burst);
    expect(passed.length).toBeLessThanOrEqual(
      READ.burst + Math.ceil(elapsedS * READ.refillPerSecond) + 1,
    );
    expect(passed.every((a) => a.res.status === 404)).toBe(true);
    expect(limited.length).toBeGreaterThan(0);
    for (const { res } of answers) {
      expect(res.headers.get('ratelimit-limit')).toBe(String(READ.burst));
      expect(Number(res.headers.get('ratelimit-remaining'))).toBeGreaterThanOrEqual(0);
      expect(Number(res.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(0);
    }
    for (const { res } of limited)
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('when a 429 says Retry-After, then waiting that long gets the request through', async () => {
    const token = await accessToken(await newTenant(), ['contacts:read']);
    const { res: limited, body } = (await untilLimited(20, missingContact(token))).limited.at(-1)!;
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toMatch(/^application\/json/);
    expect(JSON.parse(body)).toStrictEqual({ code: 'rate_limited', message: expect.any(String) });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);

    await new Promise((r) => setTimeout(r, retryAfter * 1000));
    expect((await missingContact(token)()).status).toBe(404);
  });

  it('when one key has used its reads, then its writes and another key of the Tenant still pass', async () => {
    const tenantId = await newTenant();
    const token = await accessToken(tenantId, ['contacts:read', 'events:write']);
    const { limited } = await untilLimited(20, missingContact(token));
    expect(limited.length).toBeGreaterThan(0);

    const write = await invalidEvent(token)();
    expect(write.status).toBe(400);
    expect(write.headers.get('ratelimit-limit')).toBe(String(WRITE.burst));
    const other = await accessToken(tenantId, ['contacts:read']);
    expect((await missingContact(other)()).status).toBe(404);
  });
});

describe('the write budget (every other method)', () => {
  it('when a key sends far more than 1,000 writes, then the burst plus at most the refill pass, then the refill lets about 100 a second through', async () => {
    const token = await accessToken(await newTenant(), ['events:write']);
    const first = await untilLimited(20, invalidEvent(token));

    expect(first.passed.length).toBeGreaterThanOrEqual(WRITE.burst);
    expect(first.passed.length).toBeLessThanOrEqual(
      WRITE.burst + Math.ceil(first.elapsedS * WRITE.refillPerSecond) + 1,
    );
    expect(first.passed.every((a) => a.res.status === 400)).toBe(true);
    expect(first.limited.length).toBeGreaterThan(0);

    // Refill: after the last 429, tokens come back at 100/s and no faster.
    const lastLimited = first.limited.reduce((a, b) => (a.receivedAt > b.receivedAt ? a : b));
    await new Promise((r) => setTimeout(r, 1_000));
    const second = await untilLimited(10, invalidEvent(token));
    const firstSent = Math.min(...second.answers.map((a) => a.sentAt));
    const lastReceived = Math.max(...second.answers.map((a) => a.receivedAt));
    const atLeast =
      Math.floor(((firstSent - lastLimited.receivedAt) / 1000) * WRITE.refillPerSecond) - 1;
    const atMost =
      Math.ceil(((lastReceived - lastLimited.sentAt) / 1000) * WRITE.refillPerSecond) + 1;
    expect(second.passed.length).toBeGreaterThanOrEqual(atLeast);
    expect(second.passed.length).toBeLessThanOrEqual(atMost);
    expect(second.limited.length).toBeGreaterThan(0);
  });

  it('when an array of 100 Events is sent, then it costs one request, as a single Event does', async () => {
    const tenantId = await newTenant();
    const token = await accessToken(tenantId, ['events:write']);
    // Unknown Contacts: 422 after the budget was charged; the cost does not depend on the outcome.
    const events = Array.from({ length: 100 }, (_, i) => ({
      contactId: randomUUID(),
      eventName: 'page_viewed',
      occurredAt: '2026-03-01T10:00:00.000Z',
      dedupKey: `k-${i}`,
    }));
    const array = await call('POST', '/v1/events/by-contact-id', token, events);
    expect(array.status).toBe(422);
    expect(array.headers.get('ratelimit-remaining')).toBe(String(WRITE.burst - 1));

    const single = await call('POST', '/v1/events/by-contact-id', token, events[0]);
    expect(single.status).toBe(422);
    expect(Number(single.headers.get('ratelimit-remaining'))).toBeLessThanOrEqual(WRITE.burst - 1);
    expect(Number(single.headers.get('ratelimit-remaining'))).toBeGreaterThanOrEqual(
      WRITE.burst - 2,
    );
  });

  it('when writes are used up, then the token exchange and the operator API still answer, without budget headers', async () => {
    const tenantId = await newTenant();
    const key = await newKey(tenantId, { kind: 'secret', scopes: ['events:write'] });
    const res = await exchange(basic(key.clientId, key.secret!));
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-limit')).toBeNull();
    const token = (await res.json()).accessToken as string;
    expect((await untilLimited(20, invalidEvent(token))).limited.length).toBeGreaterThan(0);

    expect((await exchange(basic(key.clientId, key.secret!))).status).toBe(200);
    const billing = await admin('GET', `/tenants/${tenantId}/billing`);
    expect(billing.status).toBe(200);
    expect(billing.headers.get('ratelimit-limit')).toBeNull();
  });
});
