import type { Pool } from '@herald/db';

export interface CatalogedEventName {
  name: string;
  firstSeenAt: Date;
}

/** The Tenant's catalog in code-point order of the names. */
export async function listEventNames(pool: Pool, tenantId: string): Promise<CatalogedEventName[]> {
  const { rows } = await pool.query<{ name: string; first_seen_at: Date }>(
    `select name, first_seen_at from event_names where tenant_id = $1 order by name collate "C"`,
    [tenantId],
  );
  return rows.map((r) => ({ name: r.name, firstSeenAt: r.first_seen_at }));
}
