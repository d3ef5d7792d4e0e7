/** Every `code` the public API can answer with (docs/api-reference.md#errors). */
export type ErrorCode =
  | 'validation_error'
  | 'invalid_client'
  | 'unauthenticated'
  | 'insufficient_scope'
  /** An internal route: a known Herald caller that may not call this route (docs/auth.md). */
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'payload_too_large'
  | 'unresolved_identity'
  | 'rate_limited'
  | 'internal_error'
  | 'service_unavailable';

export interface AppErrorOptions {
  code: ErrorCode;
  status: number;
  /** Extra response headers, e.g. Retry-After or WWW-Authenticate. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/** An error whose message is safe to show to the API caller. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(message: string, options: AppErrorOptions) {
    super(message, { cause: options.cause });
    this.name = 'AppError';
    this.code = options.code;
    this.status = options.status;
    this.headers = options.headers ?? {};
  }

  /** The JSON body written for this error. */
  toBody(): Record<string, unknown> {
    return { code: this.code, message: this.message };
  }
}

/** One item of a 422 body, one per unresolved Event. */
export interface UnresolvedItem {
  index: number;
  eventName: string;
  contactId: string | null;
  contactExternalId: string | null;
  contactEmail: string | null;
  organizationExternalId: string | null;
}

export class UnresolvedIdentityError extends AppError {
  readonly unresolved: readonly UnresolvedItem[];

  constructor(unresolved: readonly UnresolvedItem[], message?: string) {
    super(
      message ??
        `${unresolved.length} event(s) name a contact or organization that does not exist; nothing was recorded`,
      { code: 'unresolved_identity', status: 422 },
    );
    this.name = 'UnresolvedIdentityError';
    this.unresolved = unresolved;
  }

  override toBody(): Record<string, unknown> {
    return { code: this.code, message: this.message, unresolved: this.unresolved };
  }
}

/**
 * 402 is the one answer in problem-details form (RFC 9457), as the API documents; it is not
 * an AppError because its body has no `code`.
 */
export class SubscriptionSuspendedError extends Error {
  readonly status = 402;
  readonly type = 'subscription_suspended';
  readonly title = 'Subscription suspended';

  constructor(
    readonly detail = 'The subscription of this tenant is suspended; data is read-only until billing is fixed.',
  ) {
    super(detail);
    this.name = 'SubscriptionSuspendedError';
  }

  toBody(): Record<string, unknown> {
    return { type: this.type, title: this.title, status: this.status, detail: this.detail };
  }
}

const DEFAULT_RETRY_AFTER_SECONDS = 5;

/** Constructors for the common answers, so call sites read as what happened. */
export const errors = {
  validation: (message: string, cause?: unknown) =>
    new AppError(message, { code: 'validation_error', status: 400, cause }),
  invalidClient: () =>
    new AppError('client authentication failed', {
      code: 'invalid_client',
      status: 401,
      headers: { 'WWW-Authenticate': 'Basic realm="herald", charset="UTF-8"' },
    }),
  unauthenticated: (message = 'missing, malformed or expired access token') =>
    new AppError(message, {
      code: 'unauthenticated',
      status: 401,
      headers: { 'WWW-Authenticate': 'Bearer realm="herald", error="invalid_token"' },
    }),
  insufficientScope: (scope: string) =>
    new AppError(`missing scope ${scope}`, {
      code: 'insufficient_scope',
      status: 403,
      headers: {
        'WWW-Authenticate': `Bearer realm="herald", error="insufficient_scope", scope="${scope}"`,
      },
    }),
  forbidden: (message: string) => new AppError(message, { code: 'forbidden', status: 403 }),
  notFound: (message = 'not found') => new AppError(message, { code: 'not_found', status: 404 }),
  methodNotAllowed: (allowed: readonly string[]) =>
    new AppError(`method not allowed; allowed: ${allowed.join(', ')}`, {
      code: 'method_not_allowed',
      status: 405,
      headers: { Allow: allowed.join(', ') },
    }),
  conflict: (message: string) => new AppError(message, { code: 'conflict', status: 409 }),
  payloadTooLarge: () =>
    new AppError('request body exceeds 1 MiB; nothing was recorded', {
      code: 'payload_too_large',
      status: 413,
    }),
  rateLimited: (
    retryAfterSeconds: number,
    message = 'request budget used up; retry after the number of seconds in Retry-After',
  ) =>
    new AppError(message, {
      code: 'rate_limited',
      status: 429,
      headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
    }),
  internal: (cause?: unknown) =>
    new AppError('internal error', { code: 'internal_error', status: 500, cause }),
  unavailable: (message = 'a dependency is unavailable; retry later', cause?: unknown) =>
    new AppError(message, {
      code: 'service_unavailable',
      status: 503,
      headers: { 'Retry-After': String(DEFAULT_RETRY_AFTER_SECONDS) },
      cause,
    }),
};
