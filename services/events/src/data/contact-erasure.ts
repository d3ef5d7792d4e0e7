import type { PoolClient } from '@herald/db';
import { contactLockKey } from './contact-locks.js';

/**
 * A Contact with a great many Events takes longer to erase than the pool's statement timeout
 * allows; for the rest of the erasure's transaction the limit is this.
 */
export async function allowLongErasure(client: PoolClient): Promise<void> {
  await client.query(`set local statement_timeout = '5min'`);
}

/**
 * Takes the Contact's lock exclusively until the transaction ends: waits for the recordings of
 * its Events in flight (they hold it shared) and keeps new ones waiting.
 */
export async function lockContactExclusively(
  client: PoolClient,
  tenantId: string,
  contactId: string,
): Promise<void> {
  await client.query('select pg_advisory_xact_lock($1::bigint)', [
    contactLockKey(tenantId, contactId),
  ]);
}

/** Remembers the bare ids, so that recording refuses Events about the Contact from now on. */
export async function markContactErased(
  client: PoolClient,
  tenantId: string,
  contactId: string,
): Promise<void> {
  await client.query(
    `insert into erased_contacts (tenant_id, contact_id) values ($1, $2)
     on conflict (tenant_id, contact_id) do nothing`,
    [tenantId, contactId],
  );
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
