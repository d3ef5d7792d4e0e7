import { hash } from 'node:crypto';
import type { PoolClient } from '@herald/db';

/**
 * The advisory lock that keeps an Event from outliving its Contact's erasure. Recording takes it
 * shared (`pg_advisory_xact_lock_shared`, in record_events_batch) for every Contact its Events
 * name, then checks `erased_contacts` in a later statement (whose snapshot sees what the lock
 * waited for); an erasure takes it exclusive (`pg_advisory_xact_lock`), so it waits for the
 * recordings in flight and the ones after it find the Contact erased. Both hold it until their
 * transaction ends.
 *
 * A 64-bit key (as text, for a `$1::bigint` parameter) from the Tenant and the Contact. A hash
 * collision only makes two Contacts wait for each other now and then.
 */
export function contactLockKey(tenantId: string, contactId: string): string {
  return hash(
    'sha256',
    `herald.events.contact:${tenantId.toLowerCase()}:${contactId.toLowerCase()}`,
    'buffer',
  )
    .readBigInt64BE(0)
    .toString();
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
