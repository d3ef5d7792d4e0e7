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

/** Where a page of Tenants starts: after this one, in the list's order (newest first). */
export interface TenantPosition {
  /** created_at in whole microseconds since the epoch: exact, unlike a Date. */
  createdAtUs: bigint;
  id: string;
}

/**
 * Live Tenants (not being deleted), newest first, after `after`; `search` matches a
 * case-insensitive part of the name, or the whole id. One more than `limit` is read, to know
 * whether another page follows.
 */
export async function listTenants(
  db: Queryable,
  query: { search?: string; limit: number; after?: TenantPosition },
): Promise<{ tenants: Tenant[]; next: TenantPosition | null }> {
  // LIKE's own characters in the search stand for themselves
  const pattern =
    query.search === undefined ? null : `%${query.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const { rows } = await db.query<TenantRow & { created_us: string }>(
    `select id, name, created_at,
            (extract(epoch from created_at) * 1000000)::bigint as created_us
       from tenants
      where deletion_requested_at is null
        and ($1::text is null or name ilike $1 or id::text = lower($2))
        and ($3::bigint is null
             or (created_at, id) < (timestamptz 'epoch' + $3::bigint * interval '1 microsecond', $4::uuid))
      order by created_at desc, id desc
      limit $5`,
    [
      pattern,
      query.search ?? null,
      query.after?.createdAtUs.toString() ?? null,
      query.after?.id ?? null,
      query.limit + 1,
    ],
  );
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    tenants: page.map(toTenant),
    next:
      rows.length > query.limit && last
        ? { createdAtUs: BigInt(last.created_us), id: last.id }
        : null,
  };
}

/** The Tenant, unless it does not exist or is being deleted. */
export async function findLiveTenant(db: Queryable, id: string): Promise<Tenant | null> {
  const { rows } = await db.query<TenantRow>(
    'select id, name, created_at from tenants where id = $1 and deletion_requested_at is null',
    [id],
  );
  return rows[0] ? toTenant(rows[0]) : null;
}
