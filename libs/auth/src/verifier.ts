import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors as jose,
  jwtVerify,
  type JWTVerifyGetKey,
} from 'jose';
import { errors } from '@herald/errors';
import type { RevocationList } from './revocations.js';
import { CLAIMS, TOKEN_ALGORITHM, TOKEN_TYPE, type Principal } from './token.js';

export interface TokenVerifierOptions {
  /** The auth service's JWKS, e.g. http://auth:8080/.well-known/jwks.json. */
  jwksUrl: string;
  issuer: string;
  audience: string;
  /** Tolerated clock difference between services, seconds. */
  clockToleranceSeconds?: number;
  /** How long fetched keys count as fresh; default 10 minutes. */
  jwksCacheMaxAgeMs?: number;
  /** Tests inject a local key set; production fetches the JWKS. */
  keySet?: JWTVerifyGetKey;
  /** Keys whose tokens are refused although validly signed (revoked keys). */
  revocations?: Pick<RevocationList, 'isRevoked'>;
}

export interface TokenVerifier {
  /** Resolves the token's principal, or throws 401 unauthenticated (503 when the JWKS is unreachable). */
  verify(token: string): Promise<Principal>;
}

/**
 * The auth service's JWKS, cached for 10 minutes and refetched on an unknown `kid` (at most
 * every 5 s). When a refetch of a stale cache fails, the last good keys keep verifying, so an
 * auth outage does not turn every valid token into a 503.
 */
function remoteKeySetWithFallback(jwksUrl: string, cacheMaxAge: number): JWTVerifyGetKey {
  const remote = createRemoteJWKSet(new URL(jwksUrl), {
    cooldownDuration: 5_000,
    cacheMaxAge,
    timeoutDuration: 2_000,
  });
  return async (header, token) => {
    try {
      return await remote(header, token);
    } catch (err) {
      const lastGood = remote.jwks();
      if (!lastGood || !isKeySetUnavailable(err)) throw err;
      return createLocalJWKSet(lastGood)(header, token);
    }
  };
}

/**
 * The JWKS could not be fetched or read: a dependency problem (503), not the caller's (401).
 * jose throws a non-JOSE error when fetch fails, and a bare JOSEError (ERR_JOSE_GENERIC) for
 * a non-200 answer.
 */
function isKeySetUnavailable(err: unknown): boolean {
  if (!(err instanceof jose.JOSEError)) return true;
  return (
    err instanceof jose.JWKSTimeout ||
    err instanceof jose.JWKSInvalid ||
    err.code === 'ERR_JOSE_GENERIC'
  );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Verifies access tokens locally. The JWKS is fetched once and cached; an unknown `kid`
 * (a rotated signing key) triggers one refetch, at most every 5 seconds. No call per request.
 */
export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const keySet =
    options.keySet ??
    remoteKeySetWithFallback(options.jwksUrl, options.jwksCacheMaxAgeMs ?? 10 * 60_000);

  return {
    async verify(token) {
      let payload;
      try {
        ({ payload } = await jwtVerify(token, keySet, {
          algorithms: [TOKEN_ALGORITHM],
          typ: TOKEN_TYPE,
          issuer: options.issuer,
          audience: options.audience,
          clockTolerance: options.clockToleranceSeconds ?? 5,
          requiredClaims: ['exp', 'iat', 'jti', CLAIMS.tenantId, CLAIMS.clientId, CLAIMS.scope],
        }));
      } catch (err) {
        if (isKeySetUnavailable(err)) {
          throw errors.unavailable('cannot reach the token signing keys; retry later', err);
        }
        if (err instanceof jose.JOSEError) {
          throw errors.unauthenticated(
            err instanceof jose.JWTExpired ? 'access token expired' : undefined,
          );
        }
        throw err;
      }
      const tenantId = payload[CLAIMS.tenantId];
      const clientId = payload[CLAIMS.clientId];
      const scope = payload[CLAIMS.scope];
      if (
        typeof tenantId !== 'string' ||
        !UUID.test(tenantId) ||
        typeof clientId !== 'string' ||
        typeof scope !== 'string' ||
        typeof payload.jti !== 'string'
      ) {
        throw errors.unauthenticated();
      }
      if (options.revocations?.isRevoked(clientId)) {
        throw errors.unauthenticated('the API key of this access token was revoked');
      }
      return {
        tenantId,
        clientId,
        scopes: new Set(scope.split(' ').filter(Boolean)),
        tokenId: payload.jti,
        expiresAt: new Date((payload.exp ?? 0) * 1000),
      };
    },
  };
}
