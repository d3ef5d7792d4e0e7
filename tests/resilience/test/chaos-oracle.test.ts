// The fault suite's oracle (tools/chaos/src/oracle.mjs) on made-up evidence: it must see every kind
// of failure the suite exists to catch, or a clean run of `npm run chaos` would prove nothing.
import { describe, expect, it } from '@jest/globals';

interface Ledger {
  /** dedupKey -> when it was answered 202. */
  acked: Map<string, number>;
  rejected: Map<string, number>;
  abandoned: Set<string>;
  uncertain: Set<string>;
}
interface Stored {
  rows: number;
  byKey: Map<string, Array<{ id: string; receivedAt: number }>>;
}
interface Message {
  partition: number;
  offset: string;
  timestamp: number;
  value: Record<string, unknown>;
}
interface Oracle {
  judge(input: {
    ledger: Ledger;
    stored: Stored;
    messages: Message[];
    windows: Array<{ injectedAt: number; recoveredAt: number }>;
  }): Record<string, number>;
}

const oracle = (await import(
  new URL('../../../tools/chaos/src/oracle.mjs', import.meta.url).href
)) as Oracle;

const T0 = 1_000_000;
const tenantId = 't-1';

function ledger(acked: string[], rejected: string[] = []): Ledger {
  return {
    acked: new Map(acked.map((k) => [k, T0 + 100])),
    rejected: new Map(rejected.map((k) => [k, 422])),
    abandoned: new Set(),
    uncertain: new Set(),
  };
}

function stored(rows: Array<[key: string, id: string]>): Stored {
  const byKey = new Map<string, Array<{ id: string; receivedAt: number }>>();
  for (const [key, id] of rows) byKey.set(key, [...(byKey.get(key) ?? []), { id, receivedAt: T0 }]);
  return { rows: rows.length, byKey };
}

function message(id: string, key: string, at = T0 + 500, messageId = id): Message {
  return {
    partition: 0,
    offset: '0',
    timestamp: at,
    value: { tenantId, eventId: id, messageId, dedupKey: key },
  };
}

describe('the fault suite oracle', () => {
  it('when everything answered 202 is stored once and published, then nothing is lost or doubled, and repeats on Kafka are counted', () => {
    const v = oracle.judge({
      ledger: ledger(['a', 'b'], ['r']),
      stored: stored([
        ['a', 'id-a'],
        ['b', 'id-b'],
      ]),
      messages: [message('id-a', 'a'), message('id-b', 'b'), message('id-a', 'a', T0 + 900)],
      windows: [],
    });
    expect(v).toMatchObject({
      lost: 0,
      doubled: 0,
      kafkaDuplicates: 1,
      duplicatesWithOtherId: 0,
      rejectedPresent: 0,
      maxPublishLagMs: 500,
    });
  });

  it('when an Event answered 202 is missing from PostgreSQL, never published or published too late, then each counts as lost', () => {
    const v = oracle.judge({
      ledger: ledger(['gone', 'silent', 'late', 'during']),
      stored: stored([
        ['silent', 'id-s'],
        ['late', 'id-l'],
        ['during', 'id-d'],
      ]),
      messages: [
        message('id-l', 'late', T0 + 40_000),
        // Recorded during a fault that ended at T0 + 20 s: due by T0 + 50 s.
        message('id-d', 'during', T0 + 45_000),
      ],
      windows: [{ injectedAt: T0 - 1_000, recoveredAt: T0 + 20_000 }],
    });
    expect(v).toMatchObject({ lost: 2, lostInPostgres: 1, unpublished: 1, publishedLate: 0 });

    const outside = oracle.judge({
      ledger: ledger(['late']),
      stored: stored([['late', 'id-l']]),
      messages: [message('id-l', 'late', T0 + 40_000)],
      windows: [],
    });
    expect(outside).toMatchObject({ lost: 1, publishedLate: 1 });

    // Recorded 5 s before a fault that lasted 25 s, still waiting when it began: due 30 s after
    // the recovery, not 30 s after it was recorded.
    const caught = oracle.judge({
      ledger: ledger(['waiting', 'too-late']),
      stored: stored([
        ['waiting', 'id-w'],
        ['too-late', 'id-t'],
      ]),
      messages: [message('id-w', 'waiting', T0 + 50_000), message('id-t', 'too-late', T0 + 61_000)],
      windows: [{ injectedAt: T0 + 5_000, recoveredAt: T0 + 30_000 }],
    });
    expect(caught).toMatchObject({ lost: 1, publishedLate: 1, maxPublishLagMs: 61_000 });
  });

  it('when one dedupKey is stored twice, or published under two Event ids, then it counts as doubled', () => {
    const v = oracle.judge({
      ledger: ledger(['twice', 'kafka']),
      stored: stored([
        ['twice', 'id-1'],
        ['twice', 'id-2'],
        ['kafka', 'id-3'],
      ]),
      messages: [
        message('id-1', 'twice'),
        message('id-2', 'twice'),
        message('id-3', 'kafka'),
        message('id-4', 'kafka'),
      ],
      windows: [],
    });
    expect(v).toMatchObject({ doubled: 2, publishedNotStored: 1 });
  });

  it('when an Event of a request answered 4xx is stored or published, or a repeat carries another id, then it is reported', () => {
    const v = oracle.judge({
      ledger: ledger(['a'], ['refused-db', 'refused-kafka']),
      stored: stored([
        ['a', 'id-a'],
        ['refused-db', 'id-r'],
      ]),
      messages: [
        message('id-a', 'a'),
        message('id-a', 'a', T0 + 600, 'other'),
        message('id-r', 'refused-db'),
        message('id-k', 'refused-kafka'),
      ],
      windows: [],
    });
    expect(v).toMatchObject({ rejectedPresent: 2, duplicatesWithOtherId: 1, badMessageIds: 1 });
  });
});
