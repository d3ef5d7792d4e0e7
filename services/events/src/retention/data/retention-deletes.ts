import type { Queryable } from '@herald/db';

// Served by an index on events (tenant_id, received_at), on the plain table and on each
// partition: the statements below read only the rows they delete and prune the partitions
// newer than the cutoff (by their parameters, so in generic plans too). They never name a row by
// ctid or by id alone, which are unique only within one partition.

/**
 * Where a sweep deletes: the whole table, or only the partition of the Events recorded before
 * `events` was partitioned, which the partition drops reach only once all of it is past the
 * longest retention (src/partitions/).
 */
export type SweptTable = 'events' | 'events_before_partitions';

/** Whether the partition of the Events recorded before partitioning is still there. */
export async function partitionBeforePartitioningExists(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ found: boolean }>(
    "select to_regclass('events_before_partitions') is not null as found",
  );
  return rows[0]?.found ?? false;
}

/**
 * The Tenants with at least one Event received before `before`, found without reading their
 * Events: one index descent per Tenant (a loose index scan), however many Events each has.
 */
export async function tenantsWithEventsBefore(
  db: Queryable,
  before: Date,
  table: SweptTable = 'events',
): Promise<string[]> {
  const { rows } = await db.query<{ tenant_id: string }>(
    `with recursive tenants (tenant_id) as (
       (select tenant_id from ${table} where received_at < $1 order by tenant_id limit 1)
       union all
       select (select e.tenant_id from ${table} e
               where e.tenant_id > t.tenant_id and e.received_at < $1
               order by e.tenant_id limit 1)
       from tenants t
       where t.tenant_id is not null
     )
     select tenant_id from tenants where tenant_id is not null`,
    [before],
  );
  return rows.map((row) => row.tenant_id);
}

/** Where a batch stopped: the next one starts after `through`. */
export interface DeletedBatch {
  deleted: number;
  /**
   * The latest receiving time deleted, as PostgreSQL writes it (microseconds, which a Date would
   * cut to milliseconds); undefined when the batch took all that was left.
   */
  through: string | undefined;
}

/**
 * Deletes the oldest of the Tenant's Events received after `after` and before `before`: about
 * `batchSize`, in a transaction of their own. The batch ends at the receiving time of its
 * `batchSize`-th Event and takes every Event received at that same moment (those of one
 * recording transaction), so a batch can be larger by what one batch of recording writes. The
 * next batch starts after `through`: it never walks again over what this one deleted.
 */
export async function deleteTenantEventsBatch(
  db: Queryable,
  batch: { tenantId: string; after: string | undefined; before: Date; batchSize: number },
  table: SweptTable = 'events',
): Promise<DeletedBatch> {
  const after = batch.after ?? '-infinity';
  const { rows } = await db.query<{ through: string }>(
    // Named apart from the column: `order by received_at` is the column's order, on the index.
    `select received_at::text as through from ${table}
     where tenant_id = $1 and received_at > $2 and received_at < $3
     order by received_at
     offset $4 limit 1`,
    [batch.tenantId, after, batch.before, batch.batchSize - 1],
  );
  const through = rows[0]?.through;
  const { rowCount } = await db.query(
    `delete from ${table}
     where tenant_id = $1 and received_at > $2 and received_at < $3 and received_at <= $4`,
    [batch.tenantId, after, batch.before, through ?? batch.before],
  );
  return { deleted: rowCount ?? 0, through };
}
