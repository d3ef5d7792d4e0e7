import type { Queryable } from '@herald/db';

/**
 * The Tenant's own Event retention in days (`null`: the installation's default), or `undefined`
 * when there is no such Tenant, or it is being deleted.
 */
export async function selectTenantEventRetention(
  db: Queryable,
  tenantId: string,
): Promise<{ days: number | null } | undefined> {
  const { rows } = await db.query<{ event_retention_days: number | null }>(
    'select event_retention_days from tenants where id = $1 and deletion_requested_at is null',
    [tenantId],
  );
  return rows[0] && { days: rows[0].event_retention_days };
}

/**
 * Sets the Tenant's own retention (`null`: back to the default); false when there is no such
 * Tenant, or it is being deleted.
 */
export async function updateTenantEventRetention(
  db: Queryable,
  tenantId: string,
  days: number | null,
): Promise<boolean> {
  const { rowCount } = await db.query(
    'update tenants set event_retention_days = $2 where id = $1 and deletion_requested_at is null',
    [tenantId, days],
  );
  return rowCount === 1;
}

/** Every Tenant whose own retention is not `defaultDays`, in one snapshot. */
export async function selectEventRetentionsOtherThan(
  db: Queryable,
  defaultDays: number,
): Promise<Array<{ tenantId: string; days: number }>> {
  const { rows } = await db.query<{ id: string; event_retention_days: number }>(
    `select id, event_retention_days from tenants
     where event_retention_days is not null and event_retention_days <> $1
     order by id`,
    [defaultDays],
  );
  return rows.map((row) => ({ tenantId: row.id, days: row.event_retention_days }));
}
