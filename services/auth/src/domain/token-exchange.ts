import { TOKEN_TTL_SECONDS } from '@herald/auth';
import type { Pool } from '@herald/db';
import { errors } from '@herald/errors';
import { meter, type Counter } from '@herald/telemetry';
import { findApiKeyByClientId } from '../data/api-keys-repository.js';
import type { TokenResponse } from '../schemas.js';
import type { ExchangeGuard } from './exchange-guard.js';
import { isClientId, newSecret, type BasicCredentials } from './credentials.js';
import type { SecretHasher } from './secret-hasher.js';
import type { TokenSigner } from './signing-keys.js';

export interface TokenExchangeDeps {
  pool: Pool;
  hasher: SecretHasher;
  signer: TokenSigner;
  /** A real hash of a random secret nobody knows, verified when there is no real one. */
  decoyHash: string;
  /** Limits failed exchanges per ClientID and per client address. */
  guard: ExchangeGuard;
}

export async function makeDecoyHash(hasher: SecretHasher): Promise<string> {
  return hasher.hash(newSecret());
}

/** How an exchange ended, for `auth.token.exchanges{outcome}`. */
export type ExchangeOutcome =
  'issued' | 'invalid_client' | 'rate_limited' | 'unavailable' | 'error';

const OUTCOME_BY_CODE: Readonly<Record<string, ExchangeOutcome>> = {
  invalid_client: 'invalid_client',
  rate_limited: 'rate_limited',
  service_unavailable: 'unavailable',
};

export function exchangeOutcome(err: unknown): ExchangeOutcome {
  const code = (err as { code?: unknown } | null)?.code;
  return (typeof code === 'string' && OUTCOME_BY_CODE[code]) || 'error';
}

let exchanges: Counter | undefined;

/**
 * POST /v1/token, counted by outcome (`auth.token.exchanges`): issued, invalid_client (401),
 * rate_limited (429, the exchange guard), unavailable (503: the hash queue is full or a
 * dependency is away) or error. Never by ClientID, Tenant or address.
 */
export async function exchangeCredentials(
  deps: TokenExchangeDeps,
  credentials: BasicCredentials | null,
  clientAddress: string,
): Promise<TokenResponse> {
  exchanges ??= meter('herald.auth').createCounter('auth.token.exchanges', {
    unit: '{request}',
    description:
      'Token exchanges by outcome: issued, invalid_client, rate_limited, unavailable, error',
  });
  try {
    const token = await exchange(deps, credentials, clientAddress);
    exchanges.add(1, { outcome: 'issued' });
    return token;
  } catch (err) {
    exchanges.add(1, { outcome: exchangeOutcome(err) });
    throw err;
  }
}

/**
 * POST /v1/token (docs/api-reference.md#tenants-keys-and-the-token-exchange). Every secret-key path that fails (unknown ClientID, wrong or
 * empty secret, revoked key) runs exactly one argon2 verify, so the answer takes the same
 * time whether or not the ClientID exists. A publishable key has no secret: its ClientID is
 * public and it exchanges with an empty password.
 */
async function exchange(
  deps: TokenExchangeDeps,
  credentials: BasicCredentials | null,
  clientAddress: string,
): Promise<TokenResponse> {
  const admission = await deps.guard.admit(credentials?.clientId ?? null, clientAddress);
  // A ClientID that cannot be ours fails as an unknown one does: decoy hash, guard charge.
  const key =
    credentials && isClientId(credentials.clientId)
      ? await findApiKeyByClientId(deps.pool, credentials.clientId)
      : null;

  let authenticated: boolean;
  let hashed = false;
  if (key?.kind === 'publishable') {
    authenticated = credentials!.secret === '';
  } else {
    const verified = await deps.hasher.verify(
      key?.secretHash ?? deps.decoyHash,
      credentials?.secret ?? '',
    );
    hashed = true;
    authenticated = key !== null && verified;
  }
  if (!authenticated || !key || key.revokedAt !== null) {
    // Only a failure that cost a hash counts against the guard.
    if (hashed) await admission.failed();
    throw errors.invalidClient();
  }

  const accessToken = await deps.signer.sign({
    tenantId: key.tenantId,
    clientId: key.clientId,
    scopes: key.scopes,
    ...(key.kind === 'publishable'
      ? { identifierLookup: key.identifierLookup, allowedOrigins: key.allowedOrigins }
      : {}),
  });
  return { accessToken, tokenType: 'Bearer', expiresIn: TOKEN_TTL_SECONDS };
}
