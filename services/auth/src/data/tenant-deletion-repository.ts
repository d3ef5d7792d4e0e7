import type { Queryable } from '@herald/db';

/** A Tenant's row as its deletion sees it: `requestedAt` null while it is not being deleted. */
export interface TenantDeletionState {
  requestedAt: Date | null;
}

/** The Tenant's deletion state, or null when no such Tenant exists (any more). */
export async function findTenantDeletionState(
  db: Queryable,
  tenantId: string,
): Promise<TenantDeletionState | null> {
  const { rows } = await db.query<{ deletion_requested_at: Date | null }>(
    'select deletion_requested_at from tenants where id = $1',
    [tenantId],
  );
  return rows[0] ? { requestedAt: rows[0].deletion_requested_at } : null;
}

/**
 * Marks the Tenant as being deleted (keeping the first request's time) and revokes every key it
 * has; run in one transaction. The update's row lock orders it with a key being created at the
 * same moment (createApiKey locks the row too): that key is either revoked here or refused there.
 * Resolves when the deletion was requested, or null when no such Tenant exists.
 */
export async function markTenantDeleting(db: Queryable, tenantId: string): Promise<Date | null> {
  const { rows } = await db.query<{ deletion_requested_at: Date }>(
    `update tenants set deletion_requested_at = coalesce(deletion_requested_at, now())
     where id = $1 returning deletion_requested_at`,
    [tenantId],
  );
  if (!rows[0]) return null;
  await revokeTenantKeys(db, tenantId);
  return rows[0].deletion_requested_at;
}

/** Revokes every key of the Tenant not yet revoked (their first revocation time is kept). */
export async function revokeTenantKeys(db: Queryable, tenantId: string): Promise<void> {
  await db.query(
    `update api_keys set revoked_at = now() where tenant_id = $1 and revoked_at is null`,
    [tenantId],
  );
}

/**
 * Takes the lease of the Tenant's deletion for `seconds` unless another replica holds an
 * unexpired one. Resolves the deletion's request time and the database's clock when taken, null
 * when held elsewhere or when there is no deletion to run.
 */
export async function claimDeletionLease(
  db: Queryable,
  tenantId: string,
  seconds: number,
): Promise<{ requestedAt: Date; now: Date } | null> {
  const { rows } = await db.query<{ deletion_requested_at: Date; now: Date }>(
    `update tenants set deletion_lease_until = now() + make_interval(secs => $2)
     where id = $1 and deletion_requested_at is not null
       and (deletion_lease_until is null or deletion_lease_until < now())
     returning deletion_requested_at, now() as now`,
    [tenantId, seconds],
  );
  return rows[0] ? { requestedAt: rows[0].deletion_requested_at, now: rows[0].now } : null;
}

/** Extends the lease this replica holds; resolves the database's clock. */
export async function renewDeletionLease(
  db: Queryable,
  tenantId: string,
  seconds: number,
): Promise<Date> {
  const { rows } = await db.query<{ now: Date }>(
    `update tenants set deletion_lease_until = now() + make_interval(secs => $2) where id = $1
     returning now() as now`,
    [tenantId, seconds],
  );
  return rows[0]?.now ?? new Date();
}

/** Gives the lease up (a failed attempt), so that a retry anywhere may take it at once. */
export async function releaseDeletionLease(db: Queryable, tenantId: string): Promise<void> {
  await db.query('update tenants set deletion_lease_until = null where id = $1', [tenantId]);
}

/** The Tenants being deleted whose lease is free: deletions no replica is running. */
export async function unleasedDeletions(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `select id from tenants
     where deletion_requested_at is not null
       and (deletion_lease_until is null or deletion_lease_until < now())
     order by deletion_requested_at`,
  );
  return rows.map((r) => r.id);
}

/**
 * The last step, in the caller's transaction: locks the Tenant's row, keeps its keys' ClientIDs
 * on the revocation list while their tokens could be unexpired (`windowSeconds`), deletes its
 * keys and its row, and prunes the list of what is past the window. Resolves the deletion's
 * request time, or null when the row was already gone (another replica finished first).
 */
export async function deleteTenantRow(
  db: Queryable,
  tenantId: string,
  windowSeconds: number,
): Promise<Date | null> {
  const { rows } = await db.query<{ deletion_requested_at: Date }>(
    `select deletion_requested_at from tenants
     where id = $1 and deletion_requested_at is not null for update`,
    [tenantId],
  );
  if (!rows[0]) return null;
  await revokeTenantKeys(db, tenantId);
  await db.query(
    `insert into deleted_key_revocations (client_id, revoked_at)
     select client_id, revoked_at from api_keys
     where tenant_id = $1 and revoked_at > now() - make_interval(secs => $2)
     on conflict (client_id) do nothing`,
    [tenantId, windowSeconds],
  );
  await db.query('delete from api_keys where tenant_id = $1', [tenantId]);
  await db.query('delete from tenants where id = $1', [tenantId]);
  await pruneDeletedKeyRevocations(db, windowSeconds);
  return rows[0].deletion_requested_at;
}

/** Drops the ClientIDs whose tokens have all expired. */
export async function pruneDeletedKeyRevocations(
  db: Queryable,
  windowSeconds: number,
): Promise<number> {
  const { rowCount } = await db.query(
    `delete from deleted_key_revocations where revoked_at <= now() - make_interval(secs => $1)`,
    [windowSeconds],
  );
  return rowCount ?? 0;
}
