import type { Pool } from '@herald/db';

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

export function createTenantsRepository(pool: Pool) {
  return {
    async insert(tenant: { id: string; name: string }): Promise<Tenant> {
      const { rows } = await pool.query<TenantRow>(
        'insert into tenants (id, name) values ($1, $2) returning id, name, created_at',
        [tenant.id, tenant.name],
      );
      return toTenant(rows[0]!);
    },

    async exists(id: string): Promise<boolean> {
      const { rowCount } = await pool.query('select 1 from tenants where id = $1', [id]);
      return rowCount === 1;
    },
  };
}

export type TenantsRepository = ReturnType<typeof createTenantsRepository>;
