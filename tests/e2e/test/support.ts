import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The ingress, exactly as a customer reaches it. */
export const INGRESS = process.env.HERALD_INGRESS_URL ?? 'http://localhost:8080';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const dataDir = path.resolve(repoRoot, process.env.HERALD_DATA_DIR || '.herald');

export function adminToken(): string {
  return process.env.ADMIN_TOKEN || readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
}

/** The local stack's own settings, for tests that play a second service. */
export function stackSigningKeysKid(): string {
  const keys = JSON.parse(readFileSync(path.join(dataDir, 'signing-keys.json'), 'utf8')) as Array<{
    kid: string;
  }>;
  return keys[0]!.kid;
}

export async function admin(method: string, route: string, body?: unknown, token = adminToken()) {
  return fetch(`${INGRESS}/admin/v1${route}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

export async function newTenant(name = 'E2E Tenant'): Promise<string> {
  const res = await admin('POST', '/tenants', { name });
  if (res.status !== 201) throw new Error(`tenant create answered ${res.status}`);
  return (await res.json()).id as string;
}

export async function newKey(
  tenantId: string,
  body: { kind: 'secret' | 'publishable'; scopes?: string[] } = { kind: 'secret' },
): Promise<{ clientId: string; secret?: string; scopes: string[] }> {
  const res = await admin('POST', `/tenants/${tenantId}/api-keys`, body);
  if (res.status !== 201) throw new Error(`key create answered ${res.status}`);
  return res.json();
}

export const basic = (clientId: string, secret: string) =>
  `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`;

export function exchange(authorization?: string, init: RequestInit = {}) {
  return fetch(`${INGRESS}/v1/token`, {
    method: 'POST',
    ...init,
    headers: {
      ...(authorization ? { authorization } : {}),
      ...(init.headers as Record<string, string>),
    },
  });
}

/** A key with these scopes in the tenant, exchanged for an access token. */
export async function accessToken(tenantId: string, scopes: string[]): Promise<string> {
  const key = await newKey(tenantId, { kind: 'secret', scopes });
  const res = await exchange(basic(key.clientId, key.secret!));
  if (res.status !== 200) throw new Error(`token exchange answered ${res.status}`);
  return (await res.json()).accessToken as string;
}

/** A request through the ingress with a bearer token and, when given, a JSON body. */
export function call(
  method: string,
  route: string,
  token?: string,
  body?: unknown,
  init: RequestInit = {},
) {
  return fetch(`${INGRESS}${route}`, {
    method,
    ...init,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(init.headers as Record<string, string> | undefined),
    },
    body: body === undefined ? init.body : JSON.stringify(body),
  });
}
