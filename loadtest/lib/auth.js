// Access tokens (900 s each): setup() exchanges every key once and hands the tokens to the VUs; a VU
// exchanges again when its token is within TOKEN_REFRESH_MARGIN_S of expiry, and once after a
// 401. k6 VUs share no memory, so each VU keeps its own copy and refreshes it itself.
import http from 'k6/http';
import encoding from 'k6/encoding';
import { check, sleep } from 'k6';
import {
  baseUrl,
  keys,
  requestTimeout,
  tokenRefreshJitterS,
  tokenRefreshMarginS,
} from './config.js';
import { duration, tokenRefreshes } from './metrics.js';
import { bodyJson, retryAfterSeconds } from './response.js';

const TOKEN_ROUTE = 'token';

/** A failed refresh is tried again after this long, not on every request (the exchange runs a
 *  slow hash on the server; hammering it would be its own load test). */
const REFRESH_BACKOFF_MS = 5000;

/** Resends of one exchange after a 429, a 5xx or no answer (those are retried with backoff). */
const EXCHANGE_RESENDS = 3;
/** A 429 from the exchange guard is waited out and resent, not a failure of the run. */
const EXCHANGE_EXPECTED = http.expectedStatuses(200, 429);

/**
 * POST /v1/token with HTTP Basic; {accessToken, expiresAt (epoch ms)} or null. A 429 or 503 is
 * resent after its Retry-After, another 5xx or a lost connection after a growing pause.
 */
export function exchange(key) {
  let res;
  for (let attempt = 0; ; attempt += 1) {
    res = http.post(`${baseUrl}/v1/token`, null, {
      headers: { Authorization: `Basic ${encoding.b64encode(`${key.clientId}:${key.secret}`)}` },
      tags: { name: TOKEN_ROUTE },
      timeout: requestTimeout,
      responseCallback: EXCHANGE_EXPECTED,
    });
    duration.add(res.timings.duration, { name: TOKEN_ROUTE });
    const retriable = res.status === 0 || res.status === 429 || res.status >= 500;
    if (!retriable || attempt >= EXCHANGE_RESENDS) break;
    sleep(res.status === 429 || res.status === 503 ? retryAfterSeconds(res, 1) : attempt + 1);
  }
  const body = bodyJson(res);
  const ok = check(res, {
    'token: 200 with a Bearer token': (r) =>
      r.status === 200 &&
      body?.tokenType === 'Bearer' &&
      typeof body.accessToken === 'string' &&
      Number.isInteger(body.expiresIn),
  });
  return ok
    ? { accessToken: body.accessToken, expiresAt: Date.now() + body.expiresIn * 1000 }
    : null;
}

/** For setup(): one token per key, or the test stops (nothing else could work). */
export function exchangeAll() {
  return keys.map((key) => {
    const token = exchange(key);
    if (!token) throw new Error(`token exchange failed for ${key.clientId}`);
    return token;
  });
}

let tokens = null; // this VU's tokens, by key index
let refreshMarginMs = tokenRefreshMarginS * 1000;
// Every VU starts with setup()'s tokens, which expire together: each VU refreshes up to two
// minutes (TOKEN_REFRESH_JITTER_S) earlier than the margin, at random, so the exchanges (slow hashes) spread out.
let refreshJitterMs = Math.random() * tokenRefreshJitterS * 1000;

/** Refreshes tokens this long before expiry instead (below the 900 s lifetime); the smoke test
 *  uses it so that the refresh path runs inside its few seconds. */
export function refreshTokensEarly(seconds) {
  refreshMarginMs = seconds * 1000;
  refreshJitterMs = 0;
}

/** Takes setup()'s tokens for this VU (once; later calls keep the VU's refreshed ones). */
export function adoptTokens(fromSetup) {
  if (!tokens) tokens = fromSetup.map((t) => ({ ...t, retryAt: 0 }));
}

/** Exchanges key `i` again; when that fails, the old token is kept (it may still work). */
export function refresh(i, reason) {
  tokenRefreshes.add(1, { reason });
  const token = exchange(keys[i]);
  if (token) tokens[i] = { ...token, retryAt: 0 };
  else tokens[i].retryAt = Date.now() + REFRESH_BACKOFF_MS;
}

/** The token for key `i`, refreshed first when it is within the margin of its expiry. */
export function bearer(i) {
  const t = tokens[i];
  const now = Date.now();
  if (t.expiresAt - now <= refreshMarginMs + refreshJitterMs && now >= t.retryAt) {
    refresh(i, 'expiry');
  }
  return tokens[i].accessToken;
}
