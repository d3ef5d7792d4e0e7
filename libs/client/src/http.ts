// One call to the API: attempts with a per-attempt timeout, resends with backoff within the
// attempt and time budget, one token refresh after a 401, and the error for a final answer.
// Only the runtime's fetch, AbortController, setTimeout, TextEncoder and btoa: no Node modules.
import { CLIENT_HEADERS } from './version.js';
import {
  CLIENT_CODES,
  ConnectionError,
  HeraldError,
  RateLimitedError,
  SuspendedError,
  UnresolvedIdentityError,
} from './errors.js';
import {
  canResend,
  DEFAULT_RETRY,
  isRetryableStatus,
  parseRetryAfter,
  retryDelay,
  type RetryOptions,
} from './retry.js';
import type { ErrorBody, SuspendedProblem, UnresolvedIdentityBody } from './types.js';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** Options every method takes, each overriding the client's own for this one call. */
export interface CallOptions extends Partial<RetryOptions> {
  /** Aborts the call, its waits and its resends; the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Sent as `X-Request-Id` (1 to 128 of `A-Z a-z 0-9 _ . : @ / + = -`), echoed by Herald. */
  requestId?: string;
}

export interface Request {
  method: 'GET' | 'POST' | 'PUT';
  /** The path, already percent-encoded, e.g. `/v1/contacts/a%2Fb`. */
  path: string;
  /** The JSON body, serialized once: every resend sends these very bytes. */
  body?: string;
  /** `bearer`: the access token; otherwise this `Authorization` value (the token exchange). */
  auth: 'bearer' | { authorization: string };
  accept?: string;
  /** Hand back the answer with its body unread (the export); the timeout stops at its head. */
  stream?: boolean;
  /**
   * A 404 after an attempt whose outcome is unknown (no answer, or a 5xx) counts as success:
   * for an erasure by externalId, that earlier attempt may be the one that erased the Contact.
   */
  notFoundAfterUncertainIsDone?: boolean;
  /**
   * No resend later than this after the first attempt whose outcome is unknown (ms): for Events,
   * Herald's dedup window, so that a resend can never record an Event a second time.
   */
  resendWithinMs?: number;
}

export interface Answer {
  status: number;
  headers: Headers;
  /** The parsed JSON body; undefined for an empty body or a streamed answer. */
  body: unknown;
  /** The unread answer, for `stream` requests. */
  response?: Response;
  /** For `stream` requests: call when done with the body (detaches the caller's signal). */
  release?: () => void;
  /** Requests sent, resends and the 401 resend included. */
  attempts: number;
}

/** Where a call gets its access token. */
export interface TokenProvider {
  /** A token that is not within the refresh margin of its expiry (exchanging when needed). */
  token(options: CallOptions): Promise<string>;
  /** The API refused `rejected` with a 401: get a new token (one exchange for every caller). */
  renew(rejected: string, options: CallOptions): Promise<string>;
}

export interface Transport {
  baseUrl: string;
  fetch: FetchLike;
  retry: Readonly<RetryOptions>;
  tokens?: TokenProvider;
  /** The clock and the dice, replaceable in tests. */
  now?: () => number;
  random?: () => number;
}

const TIMED_OUT = Symbol('timed out');

/** What one attempt ended with: an answer (any status) or no answer. */
type Outcome =
  | {
      kind: 'answer';
      status: number;
      headers: Headers;
      text?: string;
      response?: Response;
      release?: () => void;
    }
  | { kind: 'failed'; error: ConnectionError };

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** What an aborted call rejects with: the signal's reason (an AbortError unless one was given). */
function abortReason(signal: AbortSignal): Error {
  return (
    (signal.reason as Error | undefined) ??
    new DOMException('This operation was aborted', 'AbortError')
  );
}

/**
 * Sends `request`, resending on no answer, 408, 429 and 5xx with full-jitter backoff (at least
 * `Retry-After`), within `maxAttempts` and `deadlineMs`; after a 401 it renews the token once and
 * resends. Resolves with a 2xx answer; rejects with the HeraldError of the last failure.
 */
export async function send(
  transport: Transport,
  request: Request,
  options: CallOptions = {},
): Promise<Answer> {
  const retry = { ...transport.retry, ...definedOnly(options) };
  const now = transport.now ?? Date.now;
  const deadlineAt = now() + retry.deadlineMs;
  const signal = options.signal;
  let attempts = 0;
  let resends = 0;
  let renewed = false;
  /** Whether an attempt so far may have been carried out without its answer reaching us. */
  let uncertain = false;
  /** When the first such attempt was sent. */
  let uncertainSince: number | undefined;

  for (;;) {
    if (signal?.aborted) throw abortReason(signal);
    let token: string | undefined;
    let authorization: string;
    if (request.auth === 'bearer') {
      if (!transport.tokens) throw new TypeError('no credentials to get an access token with');
      token = await transport.tokens.token(options);
      authorization = `Bearer ${token}`;
    } else {
      authorization = request.auth.authorization;
    }

    attempts += 1;
    const sentAt = now();
    const timeoutMs = Math.max(1, Math.min(retry.timeoutMs, deadlineAt - now()));
    const outcome = await attempt(transport, request, authorization, timeoutMs, options);

    let failure: HeraldError;
    let retryAfterMs: number | null = null;
    if (outcome.kind === 'answer') {
      const { status, headers } = outcome;
      if (status >= 200 && status < 300) {
        return {
          status,
          headers,
          body: parseBody(outcome.text, status, headers, attempts),
          response: outcome.response,
          release: outcome.release,
          attempts,
        };
      }
      if (status === 404 && uncertain && request.notFoundAfterUncertainIsDone) {
        return { status, headers, body: undefined, attempts };
      }
      failure = errorFromAnswer(status, headers, outcome.text ?? '');
      failure.attempts = attempts;
      if (status === 401 && token !== undefined && !renewed) {
        // The token expired or its key's tokens were cut off: one new exchange, one resend. Not
        // a retry: it neither waits nor counts against maxAttempts.
        renewed = true;
        await transport.tokens!.renew(token, options);
        continue;
      }
      if (!isRetryableStatus(status)) throw failure;
      if (status >= 500) {
        uncertain = true;
        uncertainSince ??= sentAt;
      }
      if (status === 429 || status === 503)
        retryAfterMs = parseRetryAfter(headers.get('retry-after'), now());
    } else {
      if (signal?.aborted) throw abortReason(signal);
      failure = outcome.error;
      failure.attempts = attempts;
      uncertain = true;
      uncertainSince ??= sentAt;
    }

    resends += 1;
    const delay = retryDelay(resends, retryAfterMs, retry, transport.random);
    if (!canResend(attempts - (renewed ? 1 : 0), delay, now(), deadlineAt, retry.maxAttempts)) {
      throw failure;
    }
    if (
      request.resendWithinMs !== undefined &&
      uncertainSince !== undefined &&
      now() + delay - uncertainSince > request.resendWithinMs
    ) {
      throw failure;
    }
    await sleep(delay, signal);
  }
}

function definedOnly(options: CallOptions): Partial<RetryOptions> {
  const out: Partial<RetryOptions> = {};
  for (const key of Object.keys(DEFAULT_RETRY) as (keyof RetryOptions)[]) {
    const value = options[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

const KEEPALIVE_MAX_BYTES = 64 * 1024;
const encoder = new TextEncoder();

/** @param body a request's body, if any */
function bodyBytes(body: string | undefined): number {
  if (body === undefined) return 0;
  // Most bodies are far below the limit: count bytes only when a character might be several.
  return body.length * 3 <= KEEPALIVE_MAX_BYTES ? body.length : encoder.encode(body).length;
}

/** One request: its answer, read within `timeoutMs` (a streamed one: its head), or no answer. */
async function attempt(
  transport: Transport,
  request: Request,
  authorization: string,
  timeoutMs: number,
  options: CallOptions,
): Promise<Outcome> {
  const controller = new AbortController();
  const caller = options.signal;
  const onCallerAbort = () => controller.abort(abortReason(caller!));
  caller?.addEventListener('abort', onCallerAbort, { once: true });
  const timer = setTimeout(() => controller.abort(TIMED_OUT), timeoutMs);
  const headers: Record<string, string> = {
    accept: request.accept ?? 'application/json',
    authorization,
    ...CLIENT_HEADERS,
  };
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  if (options.requestId !== undefined) headers['x-request-id'] = options.requestId;
  let streaming = false;
  try {
    const response = await transport.fetch(transport.baseUrl + request.path, {
      method: request.method,
      headers,
      body: request.body,
      signal: controller.signal,
      // Never follow a redirect with the credentials: the API answers none.
      redirect: 'error',
      // A browser finishes a keepalive request after its page is closed; it takes bodies of
      // 64 KiB at most (all such requests in flight together).
      keepalive: !request.stream && bodyBytes(request.body) <= KEEPALIVE_MAX_BYTES,
    });
    if (request.stream && response.ok) {
      streaming = true;
      clearTimeout(timer);
      // The caller's signal keeps governing the body; detach it when the body is done.
      const release = () => caller?.removeEventListener('abort', onCallerAbort);
      return {
        kind: 'answer',
        status: response.status,
        headers: response.headers,
        response,
        release,
      };
    }
    const text = await response.text();
    return { kind: 'answer', status: response.status, headers: response.headers, text };
  } catch (error) {
    const timedOut = controller.signal.aborted && controller.signal.reason === TIMED_OUT;
    const message = timedOut
      ? `no answer within ${timeoutMs} ms (${request.method} ${request.path})`
      : `no answer: the connection failed (${request.method} ${request.path}): ${describe(error)}`;
    return {
      kind: 'failed',
      error: new ConnectionError(message, {
        code: timedOut ? CLIENT_CODES.timeout : CLIENT_CODES.network,
        cause: error,
      }),
    };
  } finally {
    clearTimeout(timer);
    if (!streaming) caller?.removeEventListener('abort', onCallerAbort);
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
}

function parseBody(text: string | undefined, status: number, headers: Headers, attempts: number) {
  if (text === undefined || text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw new HeraldError(`a ${status} answer whose body is not JSON`, {
      code: CLIENT_CODES.invalidResponse,
      status,
      requestId: headers.get('x-request-id'),
      attempts,
      cause,
    });
  }
}

function jsonOrNull(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The typed error for a non-2xx answer (docs/api-reference.md#errors). */
export function errorFromAnswer(status: number, headers: Headers, text: string): HeraldError {
  const requestId = headers.get('x-request-id');
  const body = jsonOrNull(text);
  const fields = isObject(body) ? body : {};
  const message =
    typeof fields.message === 'string'
      ? fields.message
      : typeof fields.detail === 'string'
        ? fields.detail
        : `HTTP ${status}`;

  if (status === 402) {
    const problem = fields as Partial<SuspendedProblem>;
    return new SuspendedError(problem.detail ?? message, { requestId });
  }
  if (status === 422 && Array.isArray(fields.unresolved)) {
    const { unresolved } = fields as UnresolvedIdentityBody;
    return new UnresolvedIdentityError(message, unresolved, { requestId });
  }
  if (status === 429) {
    return new RateLimitedError(message, parseRetryAfter(headers.get('retry-after')), {
      requestId,
    });
  }
  const code = typeof (fields as Partial<ErrorBody>).code === 'string' ? fields.code : undefined;
  return new HeraldError(message, {
    code: (code as string) ?? `http_${status}`,
    status,
    requestId,
  });
}

/** `Basic base64(user:password)` over UTF-8, without Node's Buffer. */
export function basicAuthorization(user: string, password: string): string {
  const bytes = new TextEncoder().encode(`${user}:${password}`);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `Basic ${btoa(binary)}`;
}
