// The occurredAt calendar check reads the date's digits in place; JavaScript's own calendar
// (proleptic Gregorian, as RFC 3339 is) is the oracle it must agree with.
import { describe, expect, it } from '@jest/globals';
import { isCalendarDate } from '../../src/schemas.js';

/** What Date makes of the year, month and day: the same day back when it exists. */
function dateAgrees(y: number, m: number, d: number): boolean {
  // setUTCFullYear, not Date.UTC: that one reads years 0..99 as 1900..1999.
  const probe = new Date(0);
  probe.setUTCFullYear(y, m - 1, d);
  return probe.getUTCFullYear() === y && probe.getUTCMonth() === m - 1 && probe.getUTCDate() === d;
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');
const at = (y: number, m: number, d: number) => `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}T12:00:00Z`;

describe('isCalendarDate', () => {
  it.each([
    ['2024-02-29', true],
    ['2026-02-29', false],
    ['2000-02-29', true],
    ['1900-02-29', false],
    ['0000-02-29', true],
    ['2026-02-30', false],
    ['2026-04-31', false],
    ['2026-12-31', true],
    ['2026-01-00', false],
    ['2026-00-10', false],
    ['2026-13-10', false],
  ])('when the date is %s, then %s', (date, real) => {
    expect(isCalendarDate(`${date}T00:00:00Z`)).toBe(real);
  });

  it('when every day 0 to 32 of every month 0 to 13 of years around each leap rule is checked, then it agrees with Date', () => {
    const years = [
      0, 1, 4, 99, 100, 400, 1582, 1600, 1700, 1900, 1999, 2000, 2024, 2026, 2100, 9996, 9999,
    ];
    const disagreements: string[] = [];
    for (const y of years) {
      for (let m = 0; m <= 13; m += 1) {
        for (let d = 0; d <= 32; d += 1) {
          if (isCalendarDate(at(y, m, d)) !== dateAgrees(y, m, d)) disagreements.push(at(y, m, d));
        }
      }
    }
    expect(disagreements).toEqual([]);
  });
});
