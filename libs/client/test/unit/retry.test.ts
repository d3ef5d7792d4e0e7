// Backoff, Retry-After parsing and which answers are resent: the pure parts of the retry policy.
import { describe, expect, it } from '@jest/globals';
import {
  backoffDelay,
  canResend,
  DEFAULT_RETRY,
  isRetryableStatus,
  parseRetryAfter,
  retryDelay,
} from '../../src/retry.js';

const steps = { baseDelayMs: 100, maxDelayMs: 1_000 };

describe('backoffDelay (full jitter)', () => {
  it('when the dice give their top, then the wait doubles per resend up to the cap', () => {
    const top = () => 0.999_999;
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n, steps, top))).toStrictEqual([
      99, 199, 399, 799, 999, 999,
    ]);
  });

  it('when the dice give 0, then there is no wait at all (the jitter is full)', () => {
    expect(backoffDelay(5, steps, () => 0)).toBe(0);
  });

  it('when drawn many times, then every wait lies in [0, ceiling)', () => {
    for (let n = 1; n <= 40; n += 1) {
      const ceiling = Math.min(steps.maxDelayMs, steps.baseDelayMs * 2 ** Math.min(n - 1, 30));
      for (let i = 0; i < 50; i += 1) {
        const delay = backoffDelay(n, steps);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThan(ceiling);
      }
    }
  });

  it('when the resend count is huge, then the exponent does not overflow', () => {
    expect(backoffDelay(10_000, steps, () => 0.5)).toBe(500);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-22T01:00:00.000Z');

  it.each([
    ['1', 1_000],
    ['0', 0],
    ['  7 ', 7_000],
    ['1.5', 1_500],
    ['120', 120_000],
  ])('when the header is delay-seconds %j, then it waits %d ms', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });

  it('when the header is an HTTP-date, then it waits until then', () => {
    expect(parseRetryAfter('Sun, 22 Nov 2026 01:00:05 GMT', now)).toBe(5_000);
  });

  it('when the HTTP-date is past, then it waits 0, never a negative time', () => {
    expect(parseRetryAfter('Sun, 22 Nov 2026 00:59:00 GMT', now)).toBe(0);
  });

  it.each([[null], [undefined], [''], ['soon'], ['-1'], ['1e3'], ['0x10']])(
    'when the header is %j, then there is no Retry-After',
    (value) => {
      expect(parseRetryAfter(value, now)).toBeNull();
    },
  );
});

describe('retryDelay', () => {
  it('when there is a Retry-After, then the wait is at least that, plus the jitter', () => {
    expect(retryDelay(1, 2_000, steps, () => 0)).toBe(2_000);
    expect(retryDelay(3, 2_000, steps, () => 0.5)).toBe(2_200);
  });

  it('when there is none, then the wait is the backoff alone', () => {
    expect(retryDelay(2, null, steps, () => 0.5)).toBe(100);
  });
});

describe('isRetryableStatus', () => {
  it.each([408, 429, 500, 502, 503, 504, 599])('when the answer is %d, then it is resent', (s) => {
    expect(isRetryableStatus(s)).toBe(true);
  });

  it.each([400, 401, 402, 403, 404, 405, 409, 413, 422])(
    'when the answer is %d, then it is final',
    (status) => {
      expect(isRetryableStatus(status)).toBe(false);
    },
  );
});

describe('canResend', () => {
  it('when attempts are left and the wait ends before the deadline, then it resends', () => {
    expect(canResend(1, 100, 0, 1_000, 3)).toBe(true);
  });

  it('when the attempts are used up, then it does not', () => {
    expect(canResend(3, 0, 0, 1_000, 3)).toBe(false);
  });

  it('when the wait would end after the deadline, then it gives up at once', () => {
    expect(canResend(1, 1_000, 0, 1_000, 3)).toBe(false);
  });

  it('has bounded defaults', () => {
    expect(DEFAULT_RETRY.maxAttempts).toBeGreaterThan(1);
    expect(DEFAULT_RETRY.deadlineMs).toBeGreaterThan(DEFAULT_RETRY.timeoutMs);
  });
});
