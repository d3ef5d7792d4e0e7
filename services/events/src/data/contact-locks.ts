import { createHash } from 'node:crypto';

/**
 * The advisory lock that keeps an Event from outliving its Contact's erasure. Recording takes it
 * shared (`pg_advisory_xact_lock_shared`) for every Contact its Events name, then checks
 * `erased_contacts`; an erasure takes it exclusive (`pg_advisory_xact_lock`), so it waits for the
 * recordings in flight and the ones after it find the Contact erased. Both hold it until their
 * transaction ends.
 *
 * A 64-bit key (as text, for a `$1::bigint` parameter) from the Tenant and the Contact. A hash
 * collision only makes two Contacts wait for each other now and then.
 */
export function contactLockKey(tenantId: string, contactId: string): string {
  return createHash('sha256')
    .update(`herald.events.contact:${tenantId.toLowerCase()}:${contactId.toLowerCase()}`)
    .digest()
    .readBigInt64BE(0)
    .toString();
}
