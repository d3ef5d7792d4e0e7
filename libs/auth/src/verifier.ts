import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors as jose,
  jwtVerify,
  type JWTVerifyGetKey,
} from 'jose';
import { errors } from '@herald/errors';
import type { RevocationList } from './revocations.js';
import {
  CLAIMS,
  PUBLISHABLE_CLIENT_ID_PREFIX,
  TOKEN_ALGORITHM,
  TOKEN_TYPE,
  type Principal,
  type PublishableKeyRules,
} from './token.js';

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
  /** How many verified tokens are remembered until they expire; default 10,000, 0 turns it off. */
  cacheSize?: number;
  /** The clock, in epoch milliseconds (tests move it); default `Date.now`. */
  now?: () => number;
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

/** A publishable key's rules from its token's claims; a claim of the wrong type is a 401. */
function publishableRulesOf(payload: Record<string, unknown>): PublishableKeyRules {
  const lookup = payload[CLAIMS.identifierLookup];
  const origins = payload[CLAIMS.allowedOrigins] ?? [];
  if (
    (lookup !== undefined && typeof lookup !== 'boolean') ||
    !Array.isArray(origins) ||
    !origins.every((o) => typeof o === 'string')
  ) {
    throw errors.unauthenticated();
  }
  return Object.freeze({
    identifierLookup: lookup === true,
    allowedOrigins: Object.freeze([...origins]),
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const DEFAULT_VERIFIED_TOKEN_CACHE_SIZE = 10_000;

interface Verified {
  principal: Principal;
  /** `exp` in epoch milliseconds: the entry is never used at or after it. */
  expiresAtMs: number;
}

/**
 * Tokens that verified, by their exact text, most recently used last. A client sends the same
 * token for up to 15 minutes, and checking its ES256 signature is most of what a request costs
 * the guard. Only successes are kept, so a forged or altered token (a different string) always
 * meets jose; the entry's life ends at `exp` itself, inside what jose accepts (`exp` plus the
 * clock tolerance), so a cache hit never admits a token jose would refuse.
 */
function verifiedTokenCache(capacity: number) {
  const entries = new Map<string, Verified>();
  return {
    get(token: string, nowMs: number): Principal | undefined {
      const hit = entries.get(token);
      if (!hit) return undefined;
      entries.delete(token);
      if (nowMs >= hit.expiresAtMs) return undefined;
      entries.set(token, hit);
      return hit.principal;
    },
    set(token: string, verified: Verified): void {
      if (capacity <= 0) return;
      if (entries.size >= capacity) {
        // The least recently used: Map keeps insertion order and a hit re-inserts.
        const oldest = entries.keys().next();
        if (!oldest.done) entries.delete(oldest.value);
      }
      entries.set(token, verified);
    },
  };
}

/**
 * Verifies access tokens locally. The JWKS is fetched once and cached; an unknown `kid`
 * (a rotated signing key) triggers one refetch, at most every 5 seconds. No call per request.
 * A token that verified is remembered until its `exp` (see `verifiedTokenCache`); whether its
 * key is revoked is asked on every call.
 */
export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const keySet =
    options.keySet ??
    remoteKeySetWithFallback(options.jwksUrl, options.jwksCacheMaxAgeMs ?? 10 * 60_000);
  const now = options.now ?? Date.now;
  const cache = verifiedTokenCache(options.cacheSize ?? DEFAULT_VERIFIED_TOKEN_CACHE_SIZE);

  /** Revocation is asked on every call, cached or not: a revoked key's tokens stop at once. */
  function admit(principal: Principal): Principal {
    if (options.revocations?.isRevoked(principal.clientId)) {
      throw errors.unauthenticated('the API key of this access token was revoked');
    }
    return principal;
  }

  return {
    async verify(token) {
      const nowMs = now();
      const cached = cache.get(token, nowMs);
      if (cached) return admit(cached);

      let payload;
      try {
        ({ payload } = await jwtVerify(token, keySet, {
          currentDate: new Date(nowMs),
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
      const publishable = clientId.startsWith(PUBLISHABLE_CLIENT_ID_PREFIX)
        ? publishableRulesOf(payload)
        : null;
      // `exp` is required above, so jose has checked it is a number.
      const expiresAtMs = (payload.exp ?? 0) * 1000;
      // Shared by every request that presents this token: frozen so none can alter the others'.
      const principal: Principal = Object.freeze({
        tenantId,
        clientId,
        scopes: new Set(scope.split(' ').filter(Boolean)),
        publishable,
        tokenId: payload.jti,
        expiresAt: new Date(expiresAtMs),
      });
      // Admitted (not revoked) before it is remembered; a refusal is never cached.
      admit(principal);
      if (nowMs < expiresAtMs) cache.set(token, { principal, expiresAtMs });
      return principal;
    },
  };
}
