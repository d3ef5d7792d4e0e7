// Everything the scripts read from the environment, read once in the init context. Target and
// credentials are required: a load test never falls back to a default target.
// A bad setting throws in the init context, which stops k6 before any request is sent.
/* global __ENV */

function required(name) {
  const value = (__ENV[name] || '').trim();
  if (!value) throw new Error(`${name} is required (see loadtest/README.md)`);
  return value;
}

function list(name) {
  return required(name)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A positive number from the environment, or the fallback. */
export function envNumber(name, fallback) {
  const raw = __ENV[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name}=${raw} is not a number >= 0`);
  return n;
}

/** A k6 duration ("30s", "2m", "1h30m") from the environment, or the fallback. */
export function envDuration(name, fallback) {
  const raw = (__ENV[name] || '').trim();
  if (!raw) return fallback;
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(raw)) throw new Error(`${name}=${raw} is not a duration`);
  return raw;
}

export const baseUrl = required('BASE_URL').replace(/\/+$/, '');

// Several keys may be given as comma-separated lists of equal length: the rate budgets are per
// key (100 writes/s, 100 reads/s), so a test that must stay under them spreads its traffic.
const clientIds = list('CLIENT_ID');
const clientSecrets = list('CLIENT_SECRET');
if (clientIds.length !== clientSecrets.length) {
  throw new Error(
    `CLIENT_ID has ${clientIds.length} entries but CLIENT_SECRET has ${clientSecrets.length}`,
  );
}
export const keys = clientIds.map((clientId, i) => ({ clientId, secret: clientSecrets[i] }));

/** An existing organization of the Tenant for POST /v1/events/by-organization (organizations
 *  are created in the web app, never by the API); without it that route is left out. */
export const organizationExternalId = (__ENV.ORGANIZATION_EXTERNAL_ID || '').trim() || null;

/** Refresh a token this long before it expires (clients should refresh one minute ahead). */
export const tokenRefreshMarginS = envNumber('TOKEN_REFRESH_MARGIN_S', 60);
/** Each VU refreshes up to this much earlier still, at random, so VUs do not refresh together. */
export const tokenRefreshJitterS = envNumber('TOKEN_REFRESH_JITTER_S', 120);

/** A request without an answer after this long is resent with the same body (same dedupKeys). */
export const requestTimeout = envDuration('REQUEST_TIMEOUT', '10s');

/** How often a request that timed out or got a 5xx is resent. */
export const maxResends = envNumber('MAX_RESENDS', 2);

/** How long one logical request may keep waiting out 429s before it gives up (seconds). */
export const maxRateLimitWaitS = envNumber('MAX_RATE_LIMIT_WAIT_S', 30);

/** Contacts upserted in setup() that every VU records Events about. */
export const seedContacts = envNumber('SEED_CONTACTS', 50);

/** Events per array: uniformly between the two, inclusive (the API allows at most 1,000). */
export const batchMin = envNumber('BATCH_MIN', 10);
export const batchMax = envNumber('BATCH_MAX', 100);

/** Where handleSummary writes the JSON summary (nothing when unset). */
export const summaryJson = (__ENV.SUMMARY_JSON || '').trim() || null;
