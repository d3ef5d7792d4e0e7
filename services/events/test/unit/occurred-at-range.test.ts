// occurredAt is stored and written back in UTC: only an instant whose UTC date-time has a
// four-digit year has an RFC 3339 form there. JavaScript's toISOString is the oracle.
import { describe, expect, it } from '@jest/globals';
import { isWithinFourDigitYears, occurredAt } from '../../src/schemas.js';

/** Whether toISOString writes the instant with a four-digit year (RFC 3339), not `±YYYYYY`. */
const rfc3339InUtc = (value: string) => /^\d{4}-/.test(new Date(value).toISOString());

describe('isWithinFourDigitYears', () => {
  it.each([
    ['the first instant', '0000-01-01T00:00:00Z', true],
    ['year 0000 at a negative offset', '0000-01-01T00:00:00-23:59', true],
    ['year 0000 at a positive offset reaching year -1', '0000-01-01T00:00:00+00:01', false],
    ['year 0000, late enough for any offset', '0000-01-01T23:59:00+23:59', true],
    ['the last millisecond', '9999-12-31T23:59:59.999Z', true],
    ['the last millisecond with digits beyond it', '9999-12-31T23:59:59.999999999Z', true],
    ['year 9999 at a positive offset', '9999-12-31T23:59:59+23:59', true],
    ['year 9999 at a negative offset reaching year 10000', '9999-12-31T23:59:59-00:01', false],
    ['year 9999, early enough for any offset', '9999-12-31T00:00:00-23:59', true],
    ['an ordinary year at any offset', '2026-03-04T05:06:07-23:59', true],
  ])('when occurredAt is %s, then %s', (_what, value, within) => {
    expect(isWithinFourDigitYears(value)).toBe(within);
    expect(rfc3339InUtc(value)).toBe(within);
  });

  it('when the first and last day of years 0000 and 9999 are read at every whole-hour offset, then it agrees with toISOString', () => {
    const disagreements: string[] = [];
    for (const day of ['0000-01-01', '0000-12-31', '9999-01-01', '9999-12-31']) {
      for (const time of ['00:00:00', '12:00:00', '23:59:59.999']) {
        for (let hours = -23; hours <= 23; hours += 1) {
          const sign = hours < 0 ? '-' : '+';
          const value = `${day}T${time}${sign}${String(Math.abs(hours)).padStart(2, '0')}:00`;
          if (isWithinFourDigitYears(value) !== rfc3339InUtc(value)) disagreements.push(value);
        }
      }
    }
    expect(disagreements).toEqual([]);
  });
});

describe('the occurredAt schema', () => {
  const message = (value: unknown) => {
    const result = occurredAt.safeParse(value);
    return result.success ? undefined : result.error.issues[0]!.message;
  };

  it('when the instant is outside the years 0000 to 9999 in UTC, then it is refused, saying so', () => {
    const outside =
      'must be an instant from 0000-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z in UTC';
    expect(message('0000-01-01T00:00:00+01:00')).toBe(outside);
    expect(message('9999-12-31t23:59:59-23:59')).toBe(outside);
  });

  it('when the date is impossible in year 9999, then the message names the date, not the range', () => {
    expect(message('9999-02-29T00:00:00-01:00')).toMatch(/^must be an RFC 3339 date-time/);
  });

  it('when the instant is at either end, then it is accepted as sent (upper-cased)', () => {
    expect(occurredAt.parse('0000-01-01T00:00:00z')).toBe('0000-01-01T00:00:00Z');
    expect(occurredAt.parse('9999-12-31T23:59:59.999Z')).toBe('9999-12-31T23:59:59.999Z');
  });
});
