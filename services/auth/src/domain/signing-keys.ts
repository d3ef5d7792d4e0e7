import { importJWK, SignJWT, type JWK } from 'jose';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { CLAIMS, TOKEN_ALGORITHM, TOKEN_TTL_SECONDS, TOKEN_TYPE } from '@herald/auth';

const privateJwk = z.object({
  kty: z.literal('EC'),
  crv: z.literal('P-256'),
  x: z.string().min(1),
  y: z.string().min(1),
  d: z.string().min(1),
  kid: z.string().min(1),
});

const keyList = z.array(privateJwk).min(1, 'at least one signing key is required');

export interface TokenClaims {
  tenantId: string;
  clientId: string;
  scopes: readonly string[];
  /** A publishable key's rules: claims only where they loosen the default (none, any Origin). */
  identifierLookup?: boolean;
  allowedOrigins?: readonly string[];
}

export interface TokenSigner {
  /** The public keys, as served at /.well-known/jwks.json. */
  readonly jwks: { keys: JWK[] };
  sign(claims: TokenClaims): Promise<string>;
}

/**
 * Builds the signer from AUTH_SIGNING_KEYS. The first key signs; every key is published, so
 * rotating is: add the new key second, deploy; move it first, deploy; drop the old one once
 * its last tokens expired (15 minutes later).
 */
export async function createTokenSigner(options: {
  signingKeysJson: string;
  issuer: string;
  audience: string;
}): Promise<TokenSigner> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(options.signingKeysJson);
  } catch {
    throw new Error('AUTH_SIGNING_KEYS is not valid JSON');
  }
  const result = keyList.safeParse(parsed);
  if (!result.success) {
    throw new Error(
      `AUTH_SIGNING_KEYS must be a JSON array of private P-256 JWKs with kid: ${result.error.issues[0]?.message}`,
    );
  }
  const keys = result.data;
  const active = keys[0]!;
  // A JWK with `d` imports as a private CryptoKey.
  const signingKey = await importJWK({ ...active, alg: TOKEN_ALGORITHM }, TOKEN_ALGORITHM);
  const jwks = {
    keys: keys.map(({ kty, crv, x, y, kid }) => ({
      kty,
      crv,
      x,
      y,
      kid,
      alg: TOKEN_ALGORITHM,
      use: 'sig',
    })),
  };

  return {
    jwks,
    sign: ({ tenantId, clientId, scopes, identifierLookup, allowedOrigins }) =>
      new SignJWT({
        [CLAIMS.tenantId]: tenantId,
        [CLAIMS.clientId]: clientId,
        [CLAIMS.scope]: scopes.join(' '),
        ...(identifierLookup ? { [CLAIMS.identifierLookup]: true } : {}),
        ...(allowedOrigins?.length ? { [CLAIMS.allowedOrigins]: [...allowedOrigins] } : {}),
      })
        .setProtectedHeader({ alg: TOKEN_ALGORITHM, kid: active.kid, typ: TOKEN_TYPE })
        .setIssuer(options.issuer)
        .setAudience(options.audience)
        .setSubject(clientId)
        .setJti(randomUUID())
        .setIssuedAt()
        .setExpirationTime(`${TOKEN_TTL_SECONDS}s`)
        .sign(signingKey),
  };
}
