// Redis stopped while Events with dedupKeys are recorded: Redis is
// dedup's fast path only, PostgreSQL keeps the authoritative claim in the request's transaction,
// so every request is still answered 202 and each dedupKey is recorded exactly once. Stops and
// starts the stack's Redis: run alone.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  countByDedupKey,
  event,
  exportedEvents,
  newContact,
  newFixture,
  record,
  restore,
  stop,
  type Contact,
  type Fixture,
  type Route,
} from './support.js';

let f: Fixture;

beforeAll(async () => {
  await restore();
  f = await newFixture('Resilience: Redis stopped');
});

afterAll(async () => {
  await restore();
});

const keyed = (route: Route, contact: Contact, dedupKey: string) =>
  event(route, f, contact, { dedupKey });

async function expectAccepted(res: Response, accepted: number) {
  expect(res.status).toBe(202);
  expect(await res.json()).toStrictEqual({ accepted });
}

describe('Redis stopped', () => {
  it('when Redis is stopped, then every request is answered 202 and each dedupKey is recorded once (in one request, across requests and routes, concurrently); once Redis is back, dedup still holds', async () => {
    const contact = await newContact(f);
    const k = Object.fromEntries(
      [1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => [n, `k${n}-${randomUUID()}`]),
    ) as Record<number, string>;
    let firstRecordedAt = 0;

    await stop('redis');
    try {
      firstRecordedAt = Date.now();
      // A key repeated inside one request, then keys repeated by a second request on another route.
      await expectAccepted(
        await record(
          f,
          'by-contact-id',
          [k[1]!, k[2]!, k[1]!, k[3]!].map((key) => keyed('by-contact-id', contact, key)),
        ),
        4,
      );
      await expectAccepted(
        await record(
          f,
          'by-email',
          [k[2]!, k[3]!, k[4]!].map((key) => keyed('by-email', contact, key)),
        ),
        3,
      );
      // Two concurrent requests with the same key, on two routes; then ten at once.
      const pair = await Promise.all([
        record(f, 'by-external-id', keyed('by-external-id', contact, k[5]!)),
        record(f, 'by-organization', [keyed('by-organization', contact, k[5]!)]),
      ]);
      for (const res of pair) await expectAccepted(res, 1);
      const ten = await Promise.all(
        Array.from({ length: 10 }, () => record(f, 'by-email', keyed('by-email', contact, k[6]!))),
      );
      for (const res of ten) await expectAccepted(res, 1);
      // A refused request claims nothing: the same key in the fixed request is recorded.
      const refused = await record(f, 'by-email', [
        keyed('by-email', contact, k[7]!),
        {
          contactEmail: 'nobody@example.com',
          eventName: 'X',
          occurredAt: new Date().toISOString(),
        },
      ]);
      expect(refused.status).toBe(422);
      await expectAccepted(await record(f, 'by-email', keyed('by-email', contact, k[7]!)), 1);

      expect(countByDedupKey(await exportedEvents(f, contact.id))).toStrictEqual({
        [k[1]!]: 1,
        [k[2]!]: 1,
        [k[3]!]: 1,
        [k[4]!]: 1,
        [k[5]!]: 1,
        [k[6]!]: 1,
        [k[7]!]: 1,
      });
    } finally {
      await restore();
    }

    // Redis is back, and knows none of the keys above: PostgreSQL's claims still hold them.
    for (let n = 1; n <= 7; n += 1) {
      await expectAccepted(
        await record(f, 'by-contact-id', keyed('by-contact-id', contact, k[n]!)),
        1,
      );
    }
    // New keys, sent twice in a row and ten times at once, with Redis answering.
    for (let i = 0; i < 2; i += 1) {
      await expectAccepted(
        await record(f, 'by-external-id', keyed('by-external-id', contact, k[8]!)),
        1,
      );
    }
    const again = await Promise.all(
      Array.from({ length: 10 }, () => record(f, 'by-email', keyed('by-email', contact, k[9]!))),
    );
    for (const res of again) await expectAccepted(res, 1);
    // Still inside the 60 s window of the first keys, so their repeats above were duplicates.
    expect(Date.now() - firstRecordedAt).toBeLessThan(55_000);

    const counts = countByDedupKey(await exportedEvents(f, contact.id));
    expect(counts).toStrictEqual(Object.fromEntries(Object.values(k).map((key) => [key, 1])));
  });
});
