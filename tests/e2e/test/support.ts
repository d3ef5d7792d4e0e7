import { execFile } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { request, type IncomingHttpHeaders } from 'node:http';
import { readFileSync } from 'node:fs';
import { expect } from '@jest/globals';
import { basicAuthorization, checkAnswer, STACK_DATA_DIR, stackAdminToken } from '@herald/testing';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The ingress, exactly as a customer reaches it. */
export const INGRESS = process.env.HERALD_INGRESS_URL ?? 'http://localhost:8080';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** The stack's data folder (HERALD_DATA_DIR, as tools/stack/src/config.mjs reads it). */
export const dataDir = STACK_DATA_DIR;

/** The stack's Prometheus (npm test sets the URL; by hand, HERALD_PROMETHEUS_PORT moves it). */
export const PROMETHEUS =
  process.env.HERALD_PROMETHEUS_URL ??
  `http://127.0.0.1:${process.env.HERALD_PROMETHEUS_PORT || 19090}`;

export const adminToken = stackAdminToken;

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
  body: {
    kind: 'secret' | 'publishable';
    scopes?: string[];
    identifierLookup?: boolean;
    allowedOrigins?: string[];
  } = { kind: 'secret' },
): Promise<{ clientId: string; secret?: string; scopes: string[] }> {
  const res = await admin('POST', `/tenants/${tenantId}/api-keys`, body);
  if (res.status !== 201) throw new Error(`key create answered ${res.status}`);
  return res.json();
}

export const basic = basicAuthorization;

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

/** A documented `{code, message}` error answer, with its request id. */
export async function expectError(
  res: Response,
  status: number,
  code: string,
): Promise<{ code: string; message: string }> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.headers.get('x-request-id')).toBeTruthy();
  const body = await res.json();
  expect(body).toStrictEqual({ code, message: expect.any(String) });
  return body as { code: string; message: string };
}

export interface CommandRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The built operator CLI. */
export const cliPath = path.join(repoRoot, 'tools', 'cli', 'dist', 'main.js');

/** A command with the ingress URL and the admin token, as an operator runs it. */
export function runCommand(
  file: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<CommandRun> {
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    HERALD_URL: INGRESS.replace(/\/+$/, ''),
    ADMIN_TOKEN: adminToken(),
    ...env,
  };
  delete childEnv.NODE_OPTIONS; // jest's VM flags are not the CLI's business
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { env: childEnv, cwd: repoRoot, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** `node tools/cli/dist/main.js <args>`. */
export const runCli = (args: string[], env: Record<string, string> = {}) =>
  runCommand(process.execPath, [cliPath, ...args], env);

/** Asserts an answer's status and reads its body to the end (so the connection is reused). */
export async function expectStatus(res: Response, status: number): Promise<void> {
  expect(res.status).toBe(status);
  await res.arrayBuffer();
}

/**
 * A loopback address of a test's own (127.x.y.z reaches the ingress on 127.0.0.1, which passes
 * it on as the client address), so no other test's per-address allowance is spent.
 */
export const newAddress = () =>
  `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;

/** node:http's answer headers, read as fetch's Headers reads them. */
export function headerReader(headers: IncomingHttpHeaders): { get(name: string): string | null } {
  return {
    get(name) {
      const value = headers[name.toLowerCase()];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : String(value);
    },
  };
}

export interface ExchangeAnswer {
  status: number;
  retryAfter: number | null;
  body: { code?: string };
}

/** POST /v1/token from `localAddress` (fetch cannot choose the source address). */
export function exchangeFrom(localAddress: string, authorization: string): Promise<ExchangeAnswer> {
  const url = new URL('/v1/token', INGRESS);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname === 'localhost' ? '127.0.0.1' : url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        localAddress,
        headers: { authorization, 'content-length': '0' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          const retryAfter = res.headers['retry-after'];
          const status = res.statusCode ?? 0;
          checkAnswer('POST', url, { status, headers: headerReader(res.headers), body: text }).then(
            () =>
              resolve({
                status,
                retryAfter: retryAfter === undefined ? null : Number(retryAfter),
                body: JSON.parse(text) as { code?: string },
              }),
            reject,
          );
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/**
 * A Tenant suspended by failed payments sends one Event (402), then pays again: the 402 that the
 * counters and dashboards must show. Returns the Tenant's id.
 */
export async function refusedWhileSuspended(
  name: string,
  body: Record<string, unknown>,
): Promise<string> {
  const tenantId = await newTenant(name);
  const token = await accessToken(tenantId, ['events:write']);
  for (let i = 0; i < 3; i += 1) {
    await expectStatus(await admin('POST', `/tenants/${tenantId}/billing/payment-failures`), 200);
  }
  await expectStatus(await call('POST', '/v1/events/by-email', token, body), 402);
  await expectStatus(await admin('POST', `/tenants/${tenantId}/billing/payment-details`), 200);
  return tenantId;
}
