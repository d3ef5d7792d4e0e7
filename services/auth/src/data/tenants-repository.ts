import type { Queryable } from '@herald/db';

export interface Tenant {
  id: string;
  name: string;
  createdAt: Date;
}

interface TenantRow {
  id: string;
  name: string;
  created_at: Date;
}

const toTenant = (row: TenantRow): Tenant => ({
  id: row.id,
  name: row.name,
  createdAt: row.created_at,
});

export async function insertTenant(
  db: Queryable,
  tenant: { id: string; name: string },
): Promise<Tenant> {
  const { rows } = await db.query<TenantRow>(
    'insert into tenants (id, name) values ($1, $2) returning id, name, created_at',
    [tenant.id, tenant.name],
  );
  return toTenant(rows[0]!);
}

/** Whether the Tenant exists and is not being deleted (one being deleted is gone for everyone). */
export async function tenantExists(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'select 1 from tenants where id = $1 and deletion_requested_at is null',
    [id],
  );
  return rowCount === 1;
}

/**
 * Locks the Tenant's row against its deletion until the transaction ends (a key being created);
 * false when it does not exist or is being deleted.
 */
export async function lockLiveTenant(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'select 1 from tenants where id = $1 and deletion_requested_at is null for share',
    [id],
  );
  return rowCount === 1;
}
