import { withTransaction, type Pool, type Queryable } from '@herald/db';

// A Tenant's rows, deleted a batch at a time, each batch its own short transaction: a batch locks
// only the rows it deletes, so recording for other Tenants never waits for a deletion. Plain SQL
// on `events` that works on a plain table and on a partitioned one alike.

/**
 * Up to `limit` of its Events about a Contact, found through the (tenant_id, contact_id, …)
 * index.
 */
export async function deleteContactEventsBatch(
  db: Queryable,
  tenantId: string,
  limit: number,
): Promise<number> {
  const { rowCount } = await db.query(
    `delete from events where id in
       (select id from events where tenant_id = $1 and contact_id is not null limit $2)`,
    [tenantId, limit],
  );
  return rowCount ?? 0;
}

/**
 * Up to `limit` of its organization Events without a Contact, which the (tenant_id, contact_id, …)
 * index leaves out (the (tenant_id, received_at) one has them). A batch may read many rows to find
 * them, for longer than the pool's statement timeout allows: it is given a minute (the auth
 * service waits 90 s for a call).
 */
export function deleteOrganizationEventsBatch(
  pool: Pool,
  tenantId: string,
  limit: number,
): Promise<number> {
  return withTransaction(pool, async (client) => {
    await client.query(`set local statement_timeout = '1min'`);
    const { rowCount } = await client.query(
      `delete from events where id in
         (select id from events where tenant_id = $1 and contact_id is null limit $2)`,
      [tenantId, limit],
    );
    return rowCount ?? 0;
  });
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
