// The API as a customer reaches it (through the stack's ingress), for the fault suite: a fresh
// Tenant with a key, an access token and an organization, through the operator API. Every
// address comes from the stack's configuration (HERALD_PORT, HERALD_DATA_DIR, ...).
import { randomUUID } from 'node:crypto';
import { ingressUrl } from '@herald/stack/index.mjs';
import { adminToken } from '@herald/stack/secrets.mjs';

export const SCOPES = ['events:write', 'contacts:write', 'contacts:read'];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One JSON request to the ingress; resolves {status, headers, body (parsed JSON or text)}.
 * Rejects on a network error or after `timeoutMs`.
 * @param {string} method
 * @param {string} route
 * @param {{token?: string, basic?: string, body?: unknown, timeoutMs?: number}} [options]
 *   `basic`: "user:password"; `body`: sent as is when a string, else as JSON
 * @returns {Promise<{status: number, headers: Headers, body: any}>}
 */
export async function request(method, route, { token, basic, body, timeoutMs = 10_000 } = {}) {
  /** @type {Record<string, string>} */
  const headers = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (basic) headers.authorization = `Basic ${Buffer.from(basic).toString('base64')}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${ingressUrl}${route}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  let parsed = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/**
 * Runs `call` until `ok(result)`, retrying network errors and answers `ok` refuses, for at most
 * `withinMs`: set-up calls made right after a recovery may meet a component still warming up.
 */
async function patiently(what, call, ok, withinMs = 60_000) {
  const deadline = Date.now() + withinMs;
  let last;
  for (;;) {
    try {
      last = await call();
      if (ok(last)) return last;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const detail =
        last instanceof Error ? last.message : `${last?.status} ${JSON.stringify(last?.body)}`;
      throw new Error(`${what} did not succeed within ${withinMs / 1000} s (last: ${detail})`);
    }
    await sleep(500);
  }
}

const admin = (method, route, body) =>
  request(method, `/admin/v1${route}`, { token: adminToken(), body });

/**
 * Exchanges a key for an access token: {accessToken, expiresAt}.
 * @param {string} clientId
 * @param {string} secret
 * @returns {Promise<{accessToken: string, expiresAt: number}>}
 */
export async function exchange(clientId, secret) {
  const res = await request('POST', '/v1/token', { basic: `${clientId}:${secret}` });
  if (res.status !== 200) throw new Error(`token exchange answered ${res.status}`);
  return {
    accessToken: res.body.accessToken,
    expiresAt: Date.now() + res.body.expiresIn * 1000,
  };
}

/**
 * A fresh Tenant for one fault: a secret key with the scopes the load needs, its access token
 * and one organization. {tenantId, clientId, secret, token, tokenExpiresAt, organization}.
 */
export async function newTenant(name) {
  const tenant = await patiently(
    'tenant create',
    () => admin('POST', '/tenants', { name }),
    (r) => r.status === 201,
  );
  const tenantId = tenant.body.id;
  const key = await patiently(
    'key create',
    () => admin('POST', `/tenants/${tenantId}/api-keys`, { kind: 'secret', scopes: SCOPES }),
    (r) => r.status === 201,
  );
  const { clientId, secret } = key.body;
  const organization = `org-${randomUUID()}`;
  await patiently(
    'organization create',
    () => admin('POST', `/tenants/${tenantId}/organizations`, { externalId: organization }),
    // 409: an earlier attempt created it and its answer was lost.
    (r) => r.status === 201 || r.status === 409,
  );
  const token = await patiently(
    'token exchange',
    () => exchange(clientId, secret),
    () => true,
  );
  return {
    tenantId,
    clientId,
    secret,
    token: token.accessToken,
    tokenExpiresAt: token.expiresAt,
    organization,
  };
}
