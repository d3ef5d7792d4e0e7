// How the fault suite's driver sends one request, as the API reference asks a client to: a
// timeout, a lost connection or a 5xx resent with the same body and keys (429 and 503 after
// Retry-After), a 401 once after a new token exchange, nothing resent later than the retry
// window allows.
import { exchange, request } from './api.mjs';

/**
 * @typedef {import('./requests.mjs').Tenant} Tenant
 * @typedef {import('./requests.mjs').Op} Op
 * @typedef {import('./bookkeeping.mjs').Ledger} Ledger
 * @typedef {import('./bookkeeping.mjs').Answer} Answer
 * @typedef {ReturnType<typeof import('./bookkeeping.mjs').createCounts>} Counts
 * @typedef {ReturnType<typeof import('./bookkeeping.mjs').createAnswers>} Answers
 *
 * @typedef {object} Track A request in flight.
 * @property {string} kind
 * @property {number} events
 * @property {number} startedAt
 *
 * @typedef {object} Outcome
 * @property {number | string} [status] the final answer's, or the failure's label (one attempt)
 * @property {true} [abandoned]          given up on after the retry window
 */

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A network failure's label for the error counts: timeout, reset, refused or network.
 * @param {any} err
 */
export function errorLabel(err) {
  if (err?.name === 'TimeoutError' || err?.name === 'AbortError') return 'timeout';
  const code = err?.cause?.code ?? err?.code;
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return 'reset';
  if (code === 'ECONNREFUSED') return 'refused';
  return 'network';
}

/**
 * Seconds of a Retry-After header as milliseconds, or null.
 * @param {Headers} [headers]
 */
function retryAfterMs(headers) {
  const value = headers?.get('retry-after');
  if (!value) return null;
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : null;
}

/**
 * Keeps `tenant.token` fresh: a new token when the one held is within a minute of expiry (or
 * when forced); the old one kept on failure. Concurrent callers share one exchange.
 * @param {Tenant} tenant
 */
export function tokenRefresher(tenant) {
  /** @type {Promise<void> | undefined} */
  let refreshing;
  return async function refreshToken(force = false) {
    if (!force && Date.now() < tenant.tokenExpiresAt - 60_000) return;
    refreshing ??= exchange(tenant.clientId, tenant.secret)
      .then((t) => {
        tenant.token = t.accessToken;
        tenant.tokenExpiresAt = t.expiresAt;
      })
      .catch(() => {})
      .finally(() => {
        refreshing = undefined;
      });
    await refreshing;
  };
}

/**
 * @param {Set<Track>} inflight
 * @returns {{kind: string, events: number, ageMs: number}[]}
 */
function inflightNow(inflight) {
  const now = Date.now();
  return [...inflight].map((t) => ({
    kind: t.kind,
    events: t.events,
    ageMs: now - t.startedAt,
  }));
}

/**
 * @param {object} options
 * @param {Tenant} options.tenant
 * @param {Ledger} options.ledger
 * @param {Counts} options.counts
 * @param {Answers} options.answers
 * @param {number} options.retryWindowMs    no resend later than this after the first send
 * @param {number} options.attemptTimeoutMs one attempt's deadline
 */
export function createSender({ tenant, ledger, counts, answers, retryWindowMs, attemptTimeoutMs }) {
  const refreshToken = tokenRefresher(tenant);
  /** @type {Set<Track>} */
  const inflight = new Set();

  /**
   * Sends one operation until it is answered 2xx, answered 4xx, or the retry window is over.
   * Resolves {status} of the final answer, or {abandoned: true}.
   * @param {Op} op
   * @param {{once?: boolean, timeoutMs?: number}} [options]
   * @returns {Promise<Outcome>}
   */
  async function execute(op, { once = false, timeoutMs = attemptTimeoutMs } = {}) {
    op.firstSentAt ??= Date.now();
    let ambiguous = false;
    let reauthenticated = false;
    for (let attempt = 1; ; attempt += 1) {
      await refreshToken();
      const track = { kind: op.kind, events: op.events, startedAt: Date.now() };
      inflight.add(track);
      /** @type {Answer | undefined} */
      let res;
      let err;
      try {
        res = await request(op.method, op.path, {
          token: tenant.token,
          body: op.bodyText,
          timeoutMs,
        });
      } catch (e) {
        err = e;
      } finally {
        inflight.delete(track);
      }
      if (op.kind === 'probe') counts.totals.probes += 1;
      else if (res) counts.countAnswer(res.status, res.headers, op.kind);
      else counts.countError(errorLabel(err), op.kind);

      if (res && res.status >= 200 && res.status < 300) {
        answers.succeeded(op, res);
        return { status: res.status };
      }
      if (res?.status === 401 && !reauthenticated) {
        reauthenticated = true;
        await refreshToken(true);
        continue;
      }
      const retryable = !res || res.status >= 500 || res.status === 429;
      if (!retryable) {
        answers.failed(op, res, ambiguous);
        return { status: res.status };
      }
      // A 5xx or no answer may come after the request was recorded (a connection lost during
      // the commit); a 429 comes from the guard, before anything is done.
      if (!res || res.status >= 500) ambiguous = true;
      if (once) {
        for (const key of op.keys) if (!ledger.acked.has(key)) ledger.abandoned.add(key);
        return { status: res?.status ?? errorLabel(err) };
      }
      const backoff = Math.min(200 * 2 ** (attempt - 1), 2_000) * (0.5 + Math.random() / 2);
      const wait = Math.min(retryAfterMs(res?.headers) ?? backoff, 10_000);
      if (Date.now() + wait > op.firstSentAt + retryWindowMs) {
        for (const key of op.keys) if (!ledger.acked.has(key)) ledger.abandoned.add(key);
        return { abandoned: true };
      }
      await sleep(wait);
    }
  }

  return {
    execute,
    /** Requests in flight now: [{kind, events, ageMs}]. */
    inflight: () => inflightNow(inflight),
  };
}
