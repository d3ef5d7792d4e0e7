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

export async function tenantExists(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query('select 1 from tenants where id = $1', [id]);
  return rowCount === 1;
}
