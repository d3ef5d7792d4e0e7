// When and how long to wait before resending a request. Pure functions: the unit tests drive
// them with their own clock and random numbers.

export interface RetryOptions {
  /** Requests sent for one call at most, the first included. Default 6. */
  maxAttempts: number;
  /**
   * Time for the whole call, waits and resends included, in ms. Default 60,000. The client never
   * starts a wait that would end after it: it gives up with the last error instead.
   */
  deadlineMs: number;
  /** Time for one attempt (until its answer is read), in ms. Default 15,000. */
  timeoutMs: number;
  /** The first backoff step, in ms. Default 250. */
  baseDelayMs: number;
  /** The largest backoff step, in ms. Default 10,000. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: Readonly<RetryOptions> = Object.freeze({
  maxAttempts: 6,
  deadlineMs: 60_000,
  timeoutMs: 15_000,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
});

/**
 * Statuses that are answered again, with backoff: 408, 429 (after Retry-After) and every 5xx
 * (503 after Retry-After). Everything else is final: 400, 402, 403, 404, 405, 409, 413, 422 are
 * the caller's to fix, and a 401 is handled apart (one token refresh, then final).
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * "Full jitter" exponential backoff: a uniformly random wait in [0, min(maxDelay, base·2^(n-1)))
 * before resend number `n` (1 for the first resend). `random` is Math.random's contract.
 */
export function backoffDelay(
  resend: number,
  options: Pick<RetryOptions, 'baseDelayMs' | 'maxDelayMs'>,
  random: () => number = Math.random,
): number {
  const exponent = Math.min(Math.max(resend - 1, 0), 30);
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** exponent);
  return Math.floor(random() * ceiling);
}

/**
 * A `Retry-After` header in ms: delay-seconds (`"3"`, `"1.5"` tolerated) or an HTTP-date, which
 * counts from `now`. `null` for a missing or unreadable value; never negative.
 */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | null {
  if (value === null || value === undefined) return null;
  const text = value.trim();
  if (text === '') return null;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // An HTTP-date has letters and a comma or spaces (`Wed, 21 Oct 2015 07:28:00 GMT`); a bare
  // number of another form (`-1`, `1e3`) is not a date Date.parse should guess at.
  if (!/[a-z]/i.test(text)) return null;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}

/**
 * The wait before resend number `resend`: at least what `Retry-After` asked for, plus a full
 * jitter backoff so that many clients told the same Retry-After do not come back at once.
 */
export function retryDelay(
  resend: number,
  retryAfterMs: number | null,
  options: Pick<RetryOptions, 'baseDelayMs' | 'maxDelayMs'>,
  random: () => number = Math.random,
): number {
  const jitter = backoffDelay(resend, options, random);
  return retryAfterMs === null ? jitter : retryAfterMs + jitter;
}

/**
 * The remaining budget check: whether a resend after `delayMs` still fits the attempts and the
 * deadline (`deadlineAt`, on the same clock as `now`).
 */
export function canResend(
  attemptsMade: number,
  delayMs: number,
  now: number,
  deadlineAt: number,
  maxAttempts: number,
): boolean {
  return attemptsMade < maxAttempts && now + delayMs < deadlineAt;
}
