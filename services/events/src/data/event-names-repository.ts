import type { Pool, PoolClient } from '@herald/db';

export interface CatalogedEventName {
  name: string;
  firstSeenAt: Date;
}

/**
 * Adds the names not yet in the Tenant's catalog (first seen in the Tenant), in the recording's
 * transaction: a refused request catalogs nothing. Sorted, so that two recordings adding the
 * same new names wait for each other in one order instead of deadlocking.
 */
export async function catalogEventNames(
  client: PoolClient,
  tenantId: string,
  names: readonly string[],
): Promise<void> {
  if (names.length === 0) return;
  const sorted = [...new Set(names)].sort();
  await client.query(
    `insert into event_names (tenant_id, name)
     select $1, n from unnest($2::text[]) as n
     on conflict (tenant_id, name) do nothing`,
    [tenantId, sorted],
  );
}

/** The Tenant's catalog in code-point order of the names. */
export async function listEventNames(pool: Pool, tenantId: string): Promise<CatalogedEventName[]> {
  const { rows } = await pool.query<{ name: string; first_seen_at: Date }>(
    `select name, first_seen_at from event_names where tenant_id = $1 order by name collate "C"`,
    [tenantId],
  );
  return rows.map((r) => ({ name: r.name, firstSeenAt: r.first_seen_at }));
}
