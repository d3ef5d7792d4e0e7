import { describe, expect, it } from '@jest/globals';
import {
  oldestPartitionAgeSeconds,
  partitionName,
  partitionsAhead,
  partitionsToCreate,
  partitionsToDrop,
  type EventPartition,
} from '../../src/partitions/partition-plan.js';

const DAY = 24 * 60 * 60_000;
const WEEK = 7 * DAY;
const at = (iso: string) => new Date(iso);
const partition = (from: string | null, to: string): EventPartition => ({
  name: from === null ? 'events_before_partitions' : partitionName(at(from)),
  from: from === null ? null : at(from),
  to: at(to),
});

describe('partitionsToCreate', () => {
  it('when the newest partition ends soon, then partitions follow it without a gap until `ahead` start after now', () => {
    const existing = [partition(null, '2026-12-06T00:00:00Z')];
    const created = partitionsToCreate(existing, at('2026-12-05T12:00:00Z'), {
      partitionMs: WEEK,
      ahead: 2,
    });
    expect(created.map((p) => [p.from?.toISOString(), p.to.toISOString()])).toEqual([
      ['2026-12-06T00:00:00.000Z', '2026-12-13T00:00:00.000Z'],
      ['2026-12-13T00:00:00.000Z', '2026-12-20T00:00:00.000Z'],
    ]);
    expect(created[0]!.name).toBe('events_p20261206_000000');
  });

  it('when the partition the clock is in ends days away, then `ahead` partitions still follow it', () => {
    const existing = [partition(null, '2026-12-06T00:00:00Z')];
    const created = partitionsToCreate(existing, at('2026-11-28T09:00:00Z'), {
      partitionMs: WEEK,
      ahead: 2,
    });
    expect(created.map((p) => p.from?.toISOString().slice(0, 10))).toEqual([
      '2026-12-06',
      '2026-12-13',
    ]);
  });

  it('when enough partitions are ahead, then nothing is created', () => {
    const existing = [
      partition('2026-12-06T00:00:00Z', '2026-12-13T00:00:00Z'),
      partition('2026-12-13T00:00:00Z', '2026-12-20T00:00:00Z'),
      partition('2026-12-20T00:00:00Z', '2026-12-27T00:00:00Z'),
    ];
    expect(
      partitionsToCreate(existing, at('2026-12-07T00:00:00Z'), { partitionMs: WEEK, ahead: 2 }),
    ).toEqual([]);
  });

  it('when upkeep stopped and the clock passed the newest partition, then the missing ones are created from its end, the current one among them', () => {
    const existing = [partition('2026-12-06T00:00:00Z', '2026-12-07T00:00:00Z')];
    const created = partitionsToCreate(existing, at('2026-12-09T06:00:00Z'), {
      partitionMs: DAY,
      ahead: 1,
    });
    expect(created.map((p) => p.from?.toISOString().slice(0, 10))).toEqual([
      '2026-12-07',
      '2026-12-08',
      '2026-12-09',
      '2026-12-10',
    ]);
  });

  it('when there is no range partition, then the first starts at now rounded down to the span', () => {
    const created = partitionsToCreate([], at('2026-12-09T06:00:00Z'), {
      partitionMs: DAY,
      ahead: 1,
    });
    expect(created[0]!.from?.toISOString()).toBe('2026-12-09T00:00:00.000Z');
    expect(created).toHaveLength(2);
  });

  it('when the span changes, then new partitions take the new span from where the old ones end', () => {
    const existing = [partition('2026-12-06T00:00:00Z', '2026-12-13T00:00:00Z')];
    const created = partitionsToCreate(existing, at('2026-12-12T00:00:00Z'), {
      partitionMs: DAY,
      ahead: 1,
    });
    expect(created.map((p) => p.from?.toISOString().slice(0, 10))).toEqual(['2026-12-13']);
  });

  it('when the settings are not usable, then it refuses them', () => {
    expect(() => partitionsToCreate([], new Date(), { partitionMs: 0, ahead: 1 })).toThrow(
      RangeError,
    );
    expect(() => partitionsToCreate([], new Date(), { partitionMs: DAY, ahead: 0 })).toThrow(
      RangeError,
    );
  });
});

describe('partitionsToDrop', () => {
  it('when a partition ends before now minus the longest retention, then it is dropped; one holding younger Events stays', () => {
    const existing = [
      partition(null, '2026-01-01T00:00:00Z'),
      partition('2026-01-01T00:00:00Z', '2026-01-08T00:00:00Z'),
      partition('2026-01-08T00:00:00Z', '2026-01-15T00:00:00Z'),
    ];
    const dropped = partitionsToDrop(existing, at('2026-01-11T00:00:00Z'), 3 * DAY);
    expect(dropped.map((p) => p.name)).toEqual([
      'events_before_partitions',
      'events_p20260101_000000',
    ]);
  });
});

describe('partitionsAhead and oldestPartitionAgeSeconds', () => {
  it('counts the partitions starting after now, and ages the oldest by its start (its end for the first)', () => {
    const existing = [
      partition(null, '2026-01-01T00:00:00Z'),
      partition('2026-01-01T00:00:00Z', '2026-01-08T00:00:00Z'),
      partition('2026-01-08T00:00:00Z', '2026-01-15T00:00:00Z'),
    ];
    const now = at('2026-01-02T00:00:00Z');
    expect(partitionsAhead(existing, now)).toBe(1);
    expect(oldestPartitionAgeSeconds(existing, now)).toBe(DAY / 1000);
    expect(oldestPartitionAgeSeconds([], now)).toBeUndefined();
  });
});
