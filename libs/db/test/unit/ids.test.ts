// Time-ordered ids: UUID version 7 whose first 48 bits are the time they were made at, so that
// rows keyed by them go in at the right edge of an index.
import { describe, expect, it } from '@jest/globals';
import { timeOrderedUuid } from '../../src/index.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The Unix time in ms a version 7 UUID holds. */
const millisOf = (id: string) => parseInt(id.replaceAll('-', '').slice(0, 12), 16);

describe('timeOrderedUuid', () => {
  it('when made, then it is a version 7 UUID of RFC 9562 variant holding the current time', () => {
    const before = Date.now();
    const id = timeOrderedUuid();
    const after = Date.now();
    expect(id).toMatch(UUID_V7);
    expect(millisOf(id)).toBeGreaterThanOrEqual(before);
    expect(millisOf(id)).toBeLessThanOrEqual(after);
  });

  it('when given an instant, then the id starts with it and ids of later instants sort after', () => {
    const at = Date.UTC(2026, 10, 24, 7, 30, 0, 123);
    const first = timeOrderedUuid(at);
    expect(millisOf(first)).toBe(at);
    expect(first.slice(0, 13)).toBe('01a20c76-293b');
    const later = [1, 2, 1000, 86_400_000].map((ms) => timeOrderedUuid(at + ms));
    expect([...later].sort()).toEqual(later);
    expect(later.every((id) => id > first)).toBe(true);
  });

  it('when many are made in one millisecond, then they are all different (74 random bits each)', () => {
    // More than one block of pooled random bytes, so that refilling it is covered too.
    const ids = Array.from({ length: 5000 }, () => timeOrderedUuid(1_700_000_000_000));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(UUID_V7);
    const tails = new Set(ids.map((id) => id.slice(-12)));
    expect(tails.size).toBe(ids.length);
  });
});
