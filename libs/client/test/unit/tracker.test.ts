// The tracker against a scripted fetch: queue bounds, batching per route, by count and by size,
// timed and explicit flushes, close, and what happens to a batch the API refuses.
import { describe, expect, it, jest } from '@jest/globals';
import {
  HeraldClient,
  HeraldError,
  QueueFullError,
  type TrackedEvent,
  type TrackerOptions,
} from '../../src/index.js';
import { send, type Transport } from '../../src/http.js';
import { fakeFetch, json, tokenAnswer, type Handler, type Sent } from '../fake-fetch.js';

const BASE = 'https://herald.test';
const occurredAt = '2026-01-01T00:00:00Z';
const ext = (i: number) => ({ contactExternalId: `user-${i}`, eventName: 'Viewed', occurredAt });

function trackerWith(options: TrackerOptions, handler: Handler = () => json(202, { accepted: 1 })) {
  const fake = fakeFetch((request, index) =>
    request.url.endsWith('/v1/token') ? tokenAnswer('tok') : handler(request, index),
  );
  const client = new HeraldClient({
    baseUrl: BASE,
    clientId: 'ck_x',
    secret: 'sk_x',
    fetch: fake.fetch,
    baseDelayMs: 1,
    maxDelayMs: 2,
  });
  const errors: { error: Error; events: readonly TrackedEvent[]; route: string }[] = [];
  const tracker = client.tracker({
    flushIntervalMs: 60_000,
    onError: (error, events, route) => errors.push({ error, events, route }),
    ...options,
  });
  const batches = () =>
    fake.sent
      .filter((r: Sent) => !r.url.endsWith('/v1/token'))
      .map((r) => ({
        route: r.url.slice(`${BASE}/v1/events/`.length),
        events: JSON.parse(r.body!) as Record<string, unknown>[],
      }));
  return { tracker, batches, errors };
}

describe('Tracker', () => {
  it('when the queue holds maxQueueSize Events, then track throws a QueueFullError and queues nothing', async () => {
    const { tracker, batches } = trackerWith({ flushAt: 100, maxQueueSize: 3 });
    for (let i = 0; i < 3; i += 1) tracker.track('by-external-id', ext(i));
    expect(() => tracker.track('by-external-id', ext(3))).toThrow(QueueFullError);
    let error: unknown;
    try {
      tracker.track('by-email', { contactEmail: 'a@example.com', eventName: 'x' });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(HeraldError);
    expect(error).toMatchObject({ code: 'queue_full', maxQueueSize: 3 });
    expect(tracker.size).toBe(3);
    await tracker.close();
    expect(batches().flatMap((b) => b.events)).toHaveLength(3);
    expect(tracker.size).toBe(0);
  });

  it('when flushAt Events are queued for a route, then a batch goes out at once', async () => {
    const { tracker, batches } = trackerWith({ flushAt: 2 });
    tracker.track('by-external-id', ext(1));
    expect(batches()).toHaveLength(0);
    tracker.track('by-external-id', ext(2));
    await tracker.flush();
    expect(batches()).toHaveLength(1);
    expect(batches()[0]!.events).toHaveLength(2);
  });

  it('when Events go to different routes, then each route gets its own requests', async () => {
    const { tracker, batches } = trackerWith({ flushAt: 10 });
    tracker.track('by-external-id', ext(1));
    tracker.track('by-email', { contactEmail: 'a@example.com', eventName: 'x' });
    tracker.track('by-contact-id', { contactId: 'c', eventName: 'x' });
    tracker.track('by-organization', { organizationExternalId: 'o', eventName: 'x' });
    tracker.track('by-external-id', ext(2));
    await tracker.flush();
    const byRoute = Object.fromEntries(batches().map((b) => [b.route, b.events.length]));
    expect(byRoute).toStrictEqual({
      'by-external-id': 2,
      'by-email': 1,
      'by-contact-id': 1,
      'by-organization': 1,
    });
  });

  it('when many Events wait, then each request carries at most flushAt of them, in order', async () => {
    const { tracker, batches } = trackerWith({ flushAt: 3 });
    const keys = Array.from({ length: 8 }, (_, i) => tracker.track('by-external-id', ext(i)));
    await tracker.close();
    expect(batches().map((b) => b.events.length)).toStrictEqual([3, 3, 2]);
    expect(batches().flatMap((b) => b.events.map((e) => e.dedupKey))).toStrictEqual(keys);
  });

  it('when Events are large, then a batch closes before maxBatchBytes', async () => {
    const { tracker, batches } = trackerWith({ flushAt: 100, maxBatchBytes: 2_000 });
    const big = { blob: 'x'.repeat(700) };
    for (let i = 0; i < 5; i += 1) tracker.track('by-external-id', { ...ext(i), properties: big });
    await tracker.flush();
    expect(batches().length).toBeGreaterThan(1);
    for (const batch of batches()) {
      expect(new TextEncoder().encode(JSON.stringify(batch.events)).length).toBeLessThanOrEqual(
        2_000,
      );
    }
    expect(batches().flatMap((b) => b.events)).toHaveLength(5);
  });

  it('when an Event alone is over maxBatchBytes, then track refuses it', () => {
    const { tracker } = trackerWith({ maxBatchBytes: 1_024 });
    expect(() =>
      tracker.track('by-external-id', { ...ext(1), properties: { blob: 'x'.repeat(2_000) } }),
    ).toThrow(RangeError);
    expect(tracker.size).toBe(0);
  });

  it('when track is called, then the Event gets occurredAt and a dedupKey now, and keeps them', async () => {
    const { tracker, batches } = trackerWith({});
    const key = tracker.track('by-external-id', { contactExternalId: 'u', eventName: 'x' });
    const own = tracker.track('by-external-id', { ...ext(1), dedupKey: 'own-key' });
    expect(own).toBe('own-key');
    await tracker.flush();
    const [first, second] = batches()[0]!.events;
    expect(first!.dedupKey).toBe(key);
    expect(Date.parse(first!.occurredAt as string)).not.toBeNaN();
    expect(second!.occurredAt).toBe(occurredAt);
  });

  it('when the interval passes, then the queue is sent without a flush call', async () => {
    const { tracker, batches } = trackerWith({ flushIntervalMs: 20 });
    tracker.track('by-external-id', ext(1));
    for (let i = 0; i < 500 && batches().length === 0; i += 1)
      await new Promise((r) => setTimeout(r, 10));
    expect(batches()).toHaveLength(1);
    await tracker.close();
  });

  it('when closed, then what is queued is sent and track refuses more', async () => {
    const { tracker, batches } = trackerWith({ flushAt: 50 });
    tracker.track('by-email', { contactEmail: 'a@example.com', eventName: 'x' });
    await tracker.close();
    await tracker.close(); // again: the same
    expect(batches()).toHaveLength(1);
    expect(() =>
      tracker.track('by-email', { contactEmail: 'a@example.com', eventName: 'x' }),
    ).toThrow(expect.objectContaining({ code: 'tracker_closed' }));
  });

  it('when close is given a timeout and the API does not answer, then it resolves by then and reports the Events it could not send', async () => {
    const { tracker, batches, errors } = trackerWith(
      { flushAt: 2 },
      () => new Promise((resolve) => setTimeout(() => resolve(json(202, { accepted: 2 })), 300)),
    );
    // One batch of 2 goes out and hangs; the third Event waits behind it in the queue.
    for (let i = 0; i < 3; i += 1) tracker.track('by-external-id', ext(i));
    const started = Date.now();
    await tracker.close({ timeoutMs: 50 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(batches()).toHaveLength(1);
    expect(errors).toHaveLength(1);
    expect((errors[0]!.error as HeraldError).code).toBe('tracker_closed');
    expect(
      errors[0]!.events.map((e) => (e as { contactExternalId?: string }).contactExternalId),
    ).toEqual(['user-2']);
    expect(tracker.size).toBe(2);
    expect(() => tracker.close({ timeoutMs: -1 })).toThrow(RangeError);
    expect(() => tracker.close({ timeoutMs: Infinity })).toThrow(RangeError);
  });

  it('when a batch is refused with a final answer, then onError gets the error and its Events', async () => {
    const { tracker, errors } = trackerWith({}, () =>
      json(403, { code: 'insufficient_scope', message: 'm' }),
    );
    tracker.track('by-external-id', ext(1));
    tracker.track('by-external-id', ext(2));
    await tracker.close();
    expect(errors).toHaveLength(1);
    expect(errors[0]!.error).toMatchObject({ status: 403, code: 'insufficient_scope' });
    expect(errors[0]!.events).toHaveLength(2);
    expect(tracker.size).toBe(0);
  });

  it('when a batch gets a 422, then the unresolved Events are reported and the rest resent with the same keys', async () => {
    const { tracker, batches, errors } = trackerWith({}, (request) => {
      const events = JSON.parse(request.body!) as { contactExternalId: string }[];
      const unresolved = events
        .map((e, index) => ({ e, index }))
        .filter(({ e }) => e.contactExternalId === 'nobody')
        .map(({ e, index }) => ({
          index,
          eventName: 'Viewed',
          contactId: null,
          contactExternalId: e.contactExternalId,
          contactEmail: null,
          organizationExternalId: null,
        }));
      return unresolved.length > 0
        ? json(422, { code: 'unresolved_identity', message: 'm', unresolved })
        : json(202, { accepted: events.length });
    });
    tracker.track('by-external-id', ext(1));
    const lost = tracker.track('by-external-id', { ...ext(2), contactExternalId: 'nobody' });
    tracker.track('by-external-id', ext(3));
    await tracker.close();
    expect(errors).toHaveLength(1);
    expect(errors[0]!.events.map((e) => e.dedupKey)).toStrictEqual([lost]);
    const [first, resent] = batches();
    expect(resent!.events).toStrictEqual([first!.events[0], first!.events[2]]);
  });

  it('when the options are out of range, then the tracker is refused', () => {
    expect(() => trackerWith({ flushAt: 1001 })).toThrow(RangeError);
    expect(() => trackerWith({ flushAt: 0 })).toThrow(RangeError);
    expect(() => trackerWith({ maxQueueSize: 0 })).toThrow(RangeError);
  });

  it('when onError throws, then the tracker goes on', async () => {
    const { tracker } = trackerWith(
      {
        onError: () => {
          throw new Error('oops');
        },
      },
      () => json(400, { code: 'validation_error', message: 'm' }),
    );
    tracker.track('by-external-id', ext(1));
    await expect(tracker.close()).resolves.toBeUndefined();
  });
});

describe('Retry-After, on a fake clock', () => {
  it('when a 429 says Retry-After 2, then nothing is resent before 2 s have passed', async () => {
    jest.useFakeTimers();
    try {
      let n = 0;
      const fake = fakeFetch(() =>
        ++n === 1
          ? json(429, { code: 'rate_limited', message: 'm' }, { 'retry-after': '2' })
          : json(202, { accepted: 1 }),
      );
      const transport: Transport = {
        baseUrl: BASE,
        fetch: fake.fetch,
        retry: {
          maxAttempts: 3,
          deadlineMs: 60_000,
          timeoutMs: 10_000,
          baseDelayMs: 100,
          maxDelayMs: 100,
        },
        random: () => 0.5, // 50 ms of jitter on top of Retry-After
        now: () => Date.now(),
      };
      const pending = send(transport, {
        method: 'POST',
        path: '/v1/events/by-email',
        body: '{}',
        auth: { authorization: 'x' },
      });
      await jest.advanceTimersByTimeAsync(2_049);
      expect(fake.sent).toHaveLength(1);
      await jest.advanceTimersByTimeAsync(1);
      expect(fake.sent).toHaveLength(2);
      await expect(pending).resolves.toMatchObject({ status: 202, attempts: 2 });
    } finally {
      jest.useRealTimers();
    }
  });

  it('when maxAttempts is 1, then a 401 still gets its one renewal and resend', async () => {
    let n = 0;
    const fake = fakeFetch((request) =>
      request.url.endsWith('/v1/token')
        ? tokenAnswer(`tok-${++n}`)
        : request.headers.authorization === 'Bearer tok-1'
          ? json(401, { code: 'unauthenticated', message: 'm' })
          : json(202, { accepted: 1 }),
    );
    const client = new HeraldClient({
      baseUrl: BASE,
      clientId: 'ck_x',
      secret: 'sk_x',
      fetch: fake.fetch,
      maxAttempts: 1,
    });
    await expect(
      client.events.byEmail({ contactEmail: 'a@b.c', eventName: 'x', occurredAt }),
    ).resolves.toStrictEqual({ accepted: 1 });
    expect(n).toBe(2);
  });
});

describe('a tracker over a publishable key', () => {
  it('when an Event names a Contact by externalId, then track throws forbidden and queues nothing', async () => {
    const client = new HeraldClient({
      baseUrl: BASE,
      publishableKey: 'pk_x',
      fetch: fakeFetch((request) =>
        request.url.endsWith('/v1/token') ? tokenAnswer('tok') : json(202, { accepted: 1 }),
      ).fetch,
    });
    const tracker = client.tracker({ flushIntervalMs: 60_000 });
    expect(() => tracker.track('by-external-id', ext(1))).toThrow(
      expect.objectContaining({ code: 'forbidden' }),
    );
    expect(tracker.size).toBe(0);
    tracker.track('by-contact-id', {
      contactId: '0b5e7d2c-1f4e-4c6b-9a51-3a0f0e2d9c11',
      eventName: 'Viewed',
    });
    expect(tracker.size).toBe(1);
    await tracker.close();
  });
});
