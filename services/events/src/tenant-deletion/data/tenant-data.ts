import type { Queryable } from '@herald/db';

// A Tenant's rows, deleted a batch at a time, each batch its own short transaction: a batch locks
// only the rows it deletes, so recording for other Tenants never waits for a deletion. Plain SQL
// on `events` that works on a plain table and on a partitioned one alike.

/**
 * Up to `limit` of its Events, Contacts' and organizations' alike, found through the
 * (tenant_id, received_at) index every partition has. Named by (id, received_at), the primary
 * key, so each is found in its own partition.
 */
export async function deleteTenantEventsBatch(
  db: Queryable,
  tenantId: string,
  limit: number,
): Promise<number> {
  const { rowCount } = await db.query(
    `delete from events where (id, received_at) in
       (select id, received_at from events where tenant_id = $1 limit $2)`,
    [tenantId, limit],
  );
  return rowCount ?? 0;
}

/**
 * The tables keyed by (tenant_id, …): a batch of one of them, found through its primary key.
 * The names are constants of this module, never input.
 */
const KEYED_BY_TENANT = {
  dedup_claims: 'dedup_key',
  event_names: 'name',
  erased_contacts: 'contact_id',
  contact_identities: 'contact_id',
} as const;

export type TenantKeyedTable = keyof typeof KEYED_BY_TENANT;

export const TENANT_KEYED_TABLES = Object.keys(KEYED_BY_TENANT) as TenantKeyedTable[];

/** Up to `limit` of its rows in `table`. */
export async function deleteTenantRowsBatch(
  db: Queryable,
  table: TenantKeyedTable,
  tenantId: string,
  limit: number,
): Promise<number> {
  const column = KEYED_BY_TENANT[table];
  const { rowCount } = await db.query(
    `delete from ${table} where (tenant_id, ${column}) in
       (select tenant_id, ${column} from ${table} where tenant_id = $1 limit $2)`,
    [tenantId, limit],
  );
  return rowCount ?? 0;
}
