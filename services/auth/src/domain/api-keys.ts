import {
  DEFAULT_SECRET_KEY_SCOPES,
  PUBLISHABLE_KEY_SCOPES,
  REVOCATION_LIST_WINDOW_SECONDS,
  type Scope,
} from '@herald/auth';
import { withTransaction, type Pool } from '@herald/db';
import { errors } from '@herald/errors';
import {
  clientIdsRevokedWithin,
  insertApiKey,
  listApiKeys,
  markApiKeyRevoked,
} from '../data/api-keys-repository.js';
import { lockLiveTenant } from '../data/tenants-repository.js';
import { newClientId, newSecret, type KeyKind } from './credentials.js';
import type { SecretHasher } from './secret-hasher.js';
import { assertTenantExists } from './tenants.js';

export interface CreatedKey {
  clientId: string;
  /** Present for a secret key, once: only its hash is stored. */
  secret?: string;
  kind: KeyKind;
  scopes: Scope[];
  /** Publishable keys only (see PublishableKeyRules of @herald/auth). */
  identifierLookup?: boolean;
  allowedOrigins?: string[];
  createdAt: Date;
}

export interface ApiKeyDeps {
  pool: Pool;
  hasher: SecretHasher;
}

function scopesFor(kind: KeyKind, requested: readonly Scope[] | undefined): Scope[] {
  if (kind === 'publishable') {
    // A publishable key can only record Events: it runs in browsers.
    if (requested && requested.some((s) => !PUBLISHABLE_KEY_SCOPES.includes(s))) {
      throw errors.validation(
        `body.scopes: a publishable key can only hold ${PUBLISHABLE_KEY_SCOPES.join(' ')}`,
      );
    }
    return [...PUBLISHABLE_KEY_SCOPES];
  }
  return [...new Set(requested ?? DEFAULT_SECRET_KEY_SCOPES)];
}

/**
 * A publishable key's rules. A secret key has none, and ignores them when sent, like any field
 * that is not its own: it may do anything its scopes allow, and never runs in a browser.
 */
function publishableRulesFor(input: {
  kind: KeyKind;
  identifierLookup?: boolean | undefined;
  allowedOrigins?: readonly string[] | undefined;
}): { identifierLookup: boolean; allowedOrigins: string[] } {
  if (input.kind === 'secret') return { identifierLookup: false, allowedOrigins: [] };
  return {
    identifierLookup: input.identifierLookup === true,
    allowedOrigins: [...new Set(input.allowedOrigins ?? [])],
  };
}

export async function createApiKey(
  deps: ApiKeyDeps,
  input: {
    tenantId: string;
    kind: KeyKind;
    scopes?: readonly Scope[] | undefined;
    name?: string | undefined;
    identifierLookup?: boolean | undefined;
    allowedOrigins?: readonly string[] | undefined;
  },
): Promise<CreatedKey> {
  const rules = publishableRulesFor(input);
  await assertTenantExists(deps, input.tenantId);
  const scopes = scopesFor(input.kind, input.scopes);
  const secret = input.kind === 'secret' ? newSecret() : undefined;
  const secretHash = secret === undefined ? null : await deps.hasher.hash(secret);
  // With the Tenant's row locked: a deletion requested meanwhile either revokes this key or,
  // having committed first, makes it a 404 (tenant-deletion-repository.ts).
  const key = await withTransaction(deps.pool, async (client) => {
    if (!(await lockLiveTenant(client, input.tenantId))) throw errors.notFound('no such tenant');
    return insertApiKey(client, {
      clientId: newClientId(input.kind),
      tenantId: input.tenantId,
      kind: input.kind,
      secretHash,
      scopes,
      name: input.name ?? null,
      ...rules,
    });
  });
  return {
    clientId: key.clientId,
    ...(secret ? { secret } : {}),
    kind: key.kind,
    scopes,
    ...(key.kind === 'publishable' ? rules : {}),
    createdAt: key.createdAt,
  };
}

export async function revokeApiKey(
  deps: Pick<ApiKeyDeps, 'pool'>,
  tenantId: string,
  clientId: string,
): Promise<void> {
  if (!(await markApiKeyRevoked(deps.pool, tenantId, clientId)))
    throw errors.notFound('no such API key in this tenant');
}

/** A key as the operator sees it afterwards: never its secret (only its hash is kept). */
export interface ListedKey {
  clientId: string;
  kind: KeyKind;
  name: string | null;
  scopes: Scope[];
  identifierLookup?: boolean;
  allowedOrigins?: string[];
  createdAt: Date;
  revokedAt: Date | null;
}

/** The Tenant's keys, revoked ones included, newest first; 404 for no such Tenant. */
export async function tenantApiKeys(
  deps: Pick<ApiKeyDeps, 'pool'>,
  tenantId: string,
): Promise<ListedKey[]> {
  await assertTenantExists(deps, tenantId);
  return (await listApiKeys(deps.pool, tenantId)).map((key) => ({
    clientId: key.clientId,
    kind: key.kind,
    name: key.name,
    scopes: key.scopes as Scope[],
    ...(key.kind === 'publishable'
      ? { identifierLookup: key.identifierLookup, allowedOrigins: key.allowedOrigins }
      : {}),
    createdAt: key.createdAt,
    revokedAt: key.revokedAt,
  }));
}

/** Only keys whose tokens could still be unexpired, so the list stays short. */
export function recentlyRevokedClientIds(deps: Pick<ApiKeyDeps, 'pool'>): Promise<string[]> {
  return clientIdsRevokedWithin(deps.pool, REVOCATION_LIST_WINDOW_SECONDS);
}
