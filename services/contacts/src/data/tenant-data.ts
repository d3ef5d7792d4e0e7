import { withTransaction, type Pool, type Queryable } from '@herald/db';
import { enqueue } from '@herald/outbox';
import { contactTombstones } from '../domain/kafka-messages.js';

// A Tenant's rows, deleted a batch at a time, each batch its own short transaction: a batch locks
// only the rows it deletes, so the other Tenants' writes never wait for a deletion.

/**
 * Deletes up to `limit` of the Tenant's Contacts and, in the same transaction, enqueues a
 * tombstone for each on the compacted herald.contacts.changed, so that Kafka's compaction drops
 * their snapshots there as an erasure's does. Returns how many it deleted.
 */
export function deleteContactsBatch(pool: Pool, tenantId: string, limit: number): Promise<number> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ id: string }>(
      `delete from contacts where id in (select id from contacts where tenant_id = $1 limit $2)
       returning id`,
      [tenantId, limit],
    );
    if (rows.length > 0) await enqueue(client, contactTombstones(rows.map((r) => r.id)));
    return rows.length;
  });
}

/** Up to `limit` of the bare ids its erasures left (contact_tombstones_tenant_id_idx). */
export async function deleteErasureTombstonesBatch(
  db: Queryable,
  tenantId: string,
  limit: number,
): Promise<number> {
  const { rowCount } = await db.query(
    `delete from contact_tombstones where id in
       (select id from contact_tombstones where tenant_id = $1 limit $2)`,
    [tenantId, limit],
  );
  return rowCount ?? 0;
}

/** Up to `limit` of its organizations. */
export async function deleteOrganizationsBatch(
  db: Queryable,
  tenantId: string,
  limit: number,
): Promise<number> {
  const { rowCount } = await db.query(
    `delete from organizations where (tenant_id, external_id) in
       (select tenant_id, external_id from organizations where tenant_id = $1 limit $2)`,
    [tenantId, limit],
  );
  return rowCount ?? 0;
}
