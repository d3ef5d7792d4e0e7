import type { Queryable } from '@herald/db';

export interface Organization {
  externalId: string;
  name: string | null;
  createdAt: Date;
}

/** Inserts; a repeat of the same externalId in the tenant is a unique violation. */
export async function insertOrganization(
  db: Queryable,
  tenantId: string,
  org: { externalId: string; name: string | null },
): Promise<Organization> {
  const { rows } = await db.query<{ external_id: string; name: string | null; created_at: Date }>(
    `insert into organizations (tenant_id, external_id, name) values ($1, $2, $3)
     returning external_id, name, created_at`,
    [tenantId, org.externalId, org.name],
  );
  const row = rows[0]!;
  return { externalId: row.external_id, name: row.name, createdAt: row.created_at };
}

/** The Tenant's organizations by externalId, after `after`; one more than `limit` is read. */
export async function listOrganizations(
  db: Queryable,
  tenantId: string,
  page: { limit: number; after?: string },
): Promise<Organization[]> {
  const { rows } = await db.query<{ external_id: string; name: string | null; created_at: Date }>(
    `select external_id, name, created_at from organizations
      where tenant_id = $1 and ($2::text is null or external_id > $2)
      order by external_id limit $3`,
    [tenantId, page.after ?? null, page.limit + 1],
  );
  return rows.map((row) => ({
    externalId: row.external_id,
    name: row.name,
    createdAt: row.created_at,
  }));
}

export async function existingOrganizations(
  db: Queryable,
  tenantId: string,
  externalIds: string[],
): Promise<Set<string>> {
  if (externalIds.length === 0) return new Set();
  const { rows } = await db.query<{ external_id: string }>({
    // Named: planned once per connection on the identity lookups' pool (identity-lookup-pool.ts).
    name: 'contacts.existing_organizations.1',
    text: 'select external_id from organizations where tenant_id = $1 and external_id = any($2::text[])',
    values: [tenantId, externalIds],
  });
  return new Set(rows.map((r) => r.external_id));
}
