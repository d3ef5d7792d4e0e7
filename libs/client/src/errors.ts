import type { UnresolvedItem } from './types.js';

/** Where an error came from, for `HeraldError.code` values the API itself never sends. */
export const CLIENT_CODES = {
  /** No answer: the connection failed, was reset or closed before the answer arrived. */
  network: 'network_error',
  /** No answer within the attempt's `timeoutMs`. */
  timeout: 'timeout',
  /** An answer that is not what the API documents (e.g. a 2xx that is not JSON). */
  invalidResponse: 'invalid_response',
  /** The tracker's queue holds `maxQueueSize` Events. */
  queueFull: 'queue_full',
  /** `track()` after `close()`. */
  trackerClosed: 'tracker_closed',
} as const;

export interface HeraldErrorOptions {
  /** The API's `code` (or, for the 402, the problem `type`), or one of CLIENT_CODES. */
  code: string;
  /** The HTTP status; `null` when there was no answer (network error, timeout). */
  status?: number | null;
  /** The answer's `X-Request-Id`: quote it when asking for support. */
  requestId?: string | null;
  /** How many requests were sent before giving up (1 when the first answer was final). */
  attempts?: number;
  cause?: unknown;
}

/**
 * Every error the client throws for a failed call. Branch on `status` and `code`, never on the
 * message (the API's messages are for people and may change).
 */
export class HeraldError extends Error {
  override name = 'HeraldError';
  readonly code: string;
  readonly status: number | null;
  readonly requestId: string | null;
  /** Requests sent for the call, resends included. */
  attempts: number;

  constructor(message: string, options: HeraldErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code;
    this.status = options.status ?? null;
    this.requestId = options.requestId ?? null;
    this.attempts = options.attempts ?? 1;
  }
}

/**
 * 422 `unresolved_identity`: some Events name a Contact or organization that does not exist.
 * Nothing of the request was recorded. Create what is missing and resend the same Events (their
 * dedupKeys are unchanged), or drop the listed ones and send the rest.
 */
export class UnresolvedIdentityError extends HeraldError {
  override name = 'UnresolvedIdentityError';
  /** One item per unresolved Event, in request order; `index` is its position in the request. */
  readonly unresolved: readonly UnresolvedItem[];
  /**
   * The request's Events as they were sent, dedupKeys included (set by the client's Event
   * methods): resend them, or those not listed in `unresolved`, and nothing is recorded twice.
   */
  events: readonly Record<string, unknown>[] = [];

  constructor(
    message: string,
    unresolved: readonly UnresolvedItem[],
    options: Omit<HeraldErrorOptions, 'code' | 'status'>,
  ) {
    super(message, { ...options, code: 'unresolved_identity', status: 422 });
    this.unresolved = unresolved;
  }
}

/** 402: the Tenant's subscription is suspended; writes are refused until billing is fixed. */
export class SuspendedError extends HeraldError {
  override name = 'SuspendedError';

  constructor(message: string, options: Omit<HeraldErrorOptions, 'code' | 'status'>) {
    super(message, { ...options, code: 'subscription_suspended', status: 402 });
  }
}

/**
 * 429 `rate_limited`, thrown once the client gave up resending (attempts or deadline used up):
 * `retryAfterMs` is how long the API asked to wait.
 */
export class RateLimitedError extends HeraldError {
  override name = 'RateLimitedError';
  /** The answer's `Retry-After` in milliseconds; `null` when it had none. */
  readonly retryAfterMs: number | null;

  constructor(
    message: string,
    retryAfterMs: number | null,
    options: Omit<HeraldErrorOptions, 'code' | 'status'>,
  ) {
    super(message, { ...options, code: 'rate_limited', status: 429 });
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * No usable answer: a connection error or a timeout (`code` `network_error` or `timeout`).
 * An Event request that ends so may or may not have been recorded; resending it with the same
 * dedupKeys (what the client does) records it exactly once.
 */
export class ConnectionError extends HeraldError {
  override name = 'ConnectionError';

  constructor(message: string, options: Omit<HeraldErrorOptions, 'status'>) {
    super(message, { ...options, status: null });
  }
}

/** `tracker.track()` on a full queue: the Event was not queued. */
export class QueueFullError extends HeraldError {
  override name = 'QueueFullError';
  /** The queue bound that was reached. */
  readonly maxQueueSize: number;

  constructor(maxQueueSize: number) {
    super(
      `the tracker's queue is full (${maxQueueSize} Events waiting or in flight); the Event was not queued`,
      { code: CLIENT_CODES.queueFull },
    );
    this.maxQueueSize = maxQueueSize;
  }
}
