import type { Queryable } from '@herald/db';
import type { KeyKind } from '../domain/credentials.js';

export interface ApiKey {
  clientId: string;
  tenantId: string;
  kind: KeyKind;
  secretHash: string | null;
  scopes: string[];
  name: string | null;
  /** Publishable keys: may name Contacts by email or externalId. */
  identifierLookup: boolean;
  /** Publishable keys: the browser Origins its tokens work from; empty: any. */
  allowedOrigins: string[];
  createdAt: Date;
  revokedAt: Date | null;
}

interface ApiKeyRow {
  client_id: string;
  tenant_id: string;
  kind: KeyKind;
  secret_hash: string | null;
  scopes: string[];
  name: string | null;
  identifier_lookup: boolean;
  allowed_origins: string[];
  created_at: Date;
  revoked_at: Date | null;
}

const COLUMNS =
  'client_id, tenant_id, kind, secret_hash, scopes, name, identifier_lookup, allowed_origins, created_at, revoked_at';

const toApiKey = (row: ApiKeyRow): ApiKey => ({
  clientId: row.client_id,
  tenantId: row.tenant_id,
  kind: row.kind,
  secretHash: row.secret_hash,
  scopes: row.scopes,
  name: row.name,
  identifierLookup: row.identifier_lookup,
  allowedOrigins: row.allowed_origins,
  createdAt: row.created_at,
  revokedAt: row.revoked_at,
});

export async function insertApiKey(
  db: Queryable,
  key: Omit<ApiKey, 'createdAt' | 'revokedAt'>,
): Promise<ApiKey> {
  const { rows } = await db.query<ApiKeyRow>(
    `insert into api_keys
         (client_id, tenant_id, kind, secret_hash, scopes, name, identifier_lookup, allowed_origins)
         values ($1, $2, $3, $4, $5, $6, $7, $8) returning ${COLUMNS}`,
    [
      key.clientId,
      key.tenantId,
      key.kind,
      key.secretHash,
      key.scopes,
      key.name,
      key.identifierLookup,
      key.allowedOrigins,
    ],
  );
  return toApiKey(rows[0]!);
}

export async function findApiKeyByClientId(
  db: Queryable,
  clientId: string,
): Promise<ApiKey | null> {
  const { rows } = await db.query<ApiKeyRow>(
    `select ${COLUMNS} from api_keys where client_id = $1`,
    [clientId],
  );
  return rows[0] ? toApiKey(rows[0]) : null;
}

/** Every key of the Tenant, revoked ones included, newest first. */
export async function listApiKeys(db: Queryable, tenantId: string): Promise<ApiKey[]> {
  const { rows } = await db.query<ApiKeyRow>(
    `select ${COLUMNS} from api_keys where tenant_id = $1 order by created_at desc, client_id`,
    [tenantId],
  );
  return rows.map(toApiKey);
}

/** Marks the key revoked (keeping the first revocation time); false when no such key in the tenant. */
export async function markApiKeyRevoked(
  db: Queryable,
  tenantId: string,
  clientId: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `update api_keys set revoked_at = coalesce(revoked_at, now())
         where tenant_id = $1 and client_id = $2`,
    [tenantId, clientId],
  );
  return rowCount === 1;
}

/**
 * ClientIDs revoked in the last `seconds` (their tokens may still be unexpired): of live keys, and
 * of the keys of deleted Tenants, which only their ClientID outlives.
 */
export async function clientIdsRevokedWithin(db: Queryable, seconds: number): Promise<string[]> {
  const { rows } = await db.query<{ client_id: string }>(
    `select client_id from (
         select client_id, revoked_at from api_keys
           where revoked_at is not null and revoked_at > now() - make_interval(secs => $1)
         union all
         select client_id, revoked_at from deleted_key_revocations
           where revoked_at > now() - make_interval(secs => $1)
       ) revoked
       order by revoked_at`,
    [seconds],
  );
  return rows.map((r) => r.client_id);
}
