import type { PoolClient } from '@herald/db';

/**
 * A Contact with a great many Events takes longer to erase than the pool's statement timeout
 * allows; for the rest of the erasure's transaction the limit is this.
 */
export async function allowLongErasure(client: PoolClient): Promise<void> {
  await client.query(`set local statement_timeout = '5min'`);
}

/**
 * Deletes every Event about the Contact (organization Events naming it included), their raw
 * dedupKeys with them, in one statement. Their dedup claims stay: a claim holds only the key's
 * hash, expires with its window and is pruned by the relay, so a key resent inside the window is
 * a duplicate whether the fast path (Redis) or PostgreSQL decides. Returns how many Events it
 * deleted.
 */
export async function deleteContactEvents(
  client: PoolClient,
  tenantId: string,
  contactId: string,
): Promise<number> {
  const { rowCount } = await client.query(
    'delete from events where tenant_id = $1 and contact_id = $2',
    [tenantId, contactId],
  );
  return rowCount ?? 0;
}
