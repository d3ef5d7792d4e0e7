import { createSign, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import {
  CLAIMS,
  createTokenVerifier,
  SCOPES,
  TOKEN_ALGORITHM,
  TOKEN_TYPE,
  type TokenVerifier,
} from '@herald/auth';

export const TEST_ISSUER = 'herald-auth';
export const TEST_AUDIENCE = 'herald-api';

/** Signs access tokens exactly as the auth service does (ES256, typ at+jwt), with a test key. */
export interface TestTokenSigner {
  publicKey: KeyObject;
  sign(claims: Record<string, unknown>, header?: Record<string, unknown>): string;
}

export function createTestSigner(): TestTokenSigner {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return {
    publicKey,
    sign(claims, header = {}) {
      const input = `${b64({ alg: TOKEN_ALGORITHM, typ: TOKEN_TYPE, kid: 'test', ...header })}.${b64(claims)}`;
      const signature = createSign('SHA256')
        .update(input)
        .sign({ key: privateKey, dsaEncoding: 'ieee-p1363' });
      return `${input}.${signature.toString('base64url')}`;
    },
  };
}

export interface TokenOptions {
  clientId?: string;
  issuer?: string;
  audience?: string;
  /** Seconds from now; negative for an expired token. Default 900. */
  expiresIn?: number;
  /** More claims, e.g. a publishable key's `identifier_lookup` and `allowed_origins`. */
  claims?: Record<string, unknown>;
}

/** An access token for the tenant with these scopes (default: every scope). */
export function signTestAccessToken(
  signer: TestTokenSigner,
  tenantId: string,
  scopes: readonly string[] = SCOPES,
  options: TokenOptions = {},
): string {
  const now = Math.floor(Date.now() / 1000);
  const clientId = options.clientId ?? `ck_test${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  return signer.sign({
    iss: options.issuer ?? TEST_ISSUER,
    aud: options.audience ?? TEST_AUDIENCE,
    sub: clientId,
    jti: randomUUID(),
    iat: now,
    exp: now + (options.expiresIn ?? 900),
    [CLAIMS.tenantId]: tenantId,
    [CLAIMS.clientId]: clientId,
    [CLAIMS.scope]: scopes.join(' '),
    ...options.claims,
  });
}

/** Tenants a service under test knows, and access tokens the test signer signs for them. */
export interface TestTenants {
  /** The known Tenant ids, in lower case; a test may add its own. */
  tenants: Set<string>;
  /** Whether the Tenant is known (its id compared in lower case): a service's `tenantExists`. */
  tenantExists: (tenantId: string) => Promise<boolean>;
  /** An access token for the Tenant with these scopes (default: every scope). */
  tokenFor: (tenantId: string, scopes?: readonly string[], options?: TokenOptions) => string;
  /** A new Tenant id, known to `tenantExists`, and a token with every scope for it. */
  newTenant: () => { tenantId: string; token: string };
}

export function createTestTenants(signer: TestTokenSigner): TestTenants {
  const tenants = new Set<string>();
  const tokenFor: TestTenants['tokenFor'] = (tenantId, scopes = SCOPES, options = {}) =>
    signTestAccessToken(signer, tenantId, scopes, options);
  return {
    tenants,
    tenantExists: (tenantId) => Promise.resolve(tenants.has(tenantId.toLowerCase())),
    tokenFor,
    newTenant: () => {
      const tenantId = randomUUID();
      tenants.add(tenantId);
      return { tenantId, token: tokenFor(tenantId) };
    },
  };
}

/** A verifier that accepts the signer's tokens (its public key as the local key set). */
export function createTestVerifier(signer: TestTokenSigner): TokenVerifier {
  return createTokenVerifier({
    jwksUrl: 'http://unused.invalid/jwks.json',
    issuer: TEST_ISSUER,
    audience: TEST_AUDIENCE,
    keySet: () => Promise.resolve(signer.publicKey),
  });
}

export interface RequestOptions {
  /** A bearer token (a bare token, or a whole Authorization value when it has a space). */
  token?: string;
  /** Sent as JSON with Content-Type application/json unless `headers` or `rawBody` say otherwise. */
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

/** Requests to a service at `baseUrl`; `token` becomes the Authorization header. */
export function createTestRequester(baseUrl: string) {
  return (method: string, path: string, opts: RequestOptions = {}): Promise<Response> => {
    const headers: Record<string, string> = {};
    if (opts.token !== undefined) {
      headers.authorization = opts.token.includes(' ') ? opts.token : `Bearer ${opts.token}`;
    }
    let body: string | undefined = opts.rawBody;
    if (opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.body);
    }
    return fetch(`${baseUrl}${path}`, { method, headers: { ...headers, ...opts.headers }, body });
  };
}

/** The Authorization header of an API key's token exchange (HTTP Basic). */
export function basicAuthorization(clientId: string, secret: string): string {
  return `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`;
}
