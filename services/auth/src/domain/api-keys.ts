import { DEFAULT_SECRET_KEY_SCOPES, PUBLISHABLE_KEY_SCOPES, type Scope } from '@herald/auth';
import { errors } from '@herald/errors';
import type { ApiKeysRepository } from '../data/api-keys-repository.js';
import type { TenantsRepository } from '../data/tenants-repository.js';
import { newClientId, newSecret, type KeyKind } from './credentials.js';
import type { SecretHasher } from './secret-hasher.js';

export interface CreatedKey {
  clientId: string;
  /** Present for a secret key, once: only its hash is stored. */
  secret?: string;
  kind: KeyKind;
  scopes: Scope[];
  createdAt: Date;
}

export interface ApiKeyDeps {
  tenants: TenantsRepository;
  apiKeys: ApiKeysRepository;
  hasher: SecretHasher;
}

function scopesFor(kind: KeyKind, requested: readonly Scope[] | undefined): Scope[] {
  if (kind === 'publishable') {
    // Decisions D.2: a publishable key can only record Events.
    if (requested && requested.some((s) => !PUBLISHABLE_KEY_SCOPES.includes(s))) {
      throw errors.validation(
        `body.scopes: a publishable key can only hold ${PUBLISHABLE_KEY_SCOPES.join(' ')}`,
      );
    }
    return [...PUBLISHABLE_KEY_SCOPES];
  }
  return [...new Set(requested ?? DEFAULT_SECRET_KEY_SCOPES)];
}

export async function createApiKey(
  deps: ApiKeyDeps,
  input: { tenantId: string; kind: KeyKind; scopes?: readonly Scope[]; name?: string },
): Promise<CreatedKey> {
  if (!(await deps.tenants.exists(input.tenantId))) throw errors.notFound('no such tenant');
  const scopes = scopesFor(input.kind, input.scopes);
  const secret = input.kind === 'secret' ? newSecret() : undefined;
  const key = await deps.apiKeys.insert({
    clientId: newClientId(input.kind),
    tenantId: input.tenantId,
    kind: input.kind,
    secretHash: secret === undefined ? null : await deps.hasher.hash(secret),
    scopes,
    name: input.name ?? null,
  });
  return {
    clientId: key.clientId,
    ...(secret ? { secret } : {}),
    kind: key.kind,
    scopes,
    createdAt: key.createdAt,
  };
}

export async function revokeApiKey(
  deps: ApiKeyDeps,
  tenantId: string,
  clientId: string,
): Promise<void> {
  if (!(await deps.apiKeys.revoke(tenantId, clientId)))
    throw errors.notFound('no such API key in this tenant');
}
