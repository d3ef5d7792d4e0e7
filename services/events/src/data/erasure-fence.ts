import { createHash } from 'node:crypto';
import type { PoolClient } from '@herald/db';

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

/**
 * Takes each Contact's lock shared until the transaction ends (see contactLockKey): an erasure
 * of one of them, which takes it exclusively, waits for this recording to commit, and one already
 * running makes this wait until it has committed. The keys are taken in one order, so two
 * recordings never wait for each other around a waiting erasure.
 *
 * Its own statement, before `erasedAmong`: a statement's snapshot is taken when it starts, so the
 * check must start after the lock is held to see an erasure that committed meanwhile.
 */
export async function lockContactsShared(
  client: PoolClient,
  tenantId: string,
  contactIds: readonly string[],
): Promise<void> {
  if (contactIds.length === 0) return;
  const keys = [...new Set(contactIds.map((id) => BigInt(contactLockKey(tenantId, id))))]
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map(String);
  await client.query(
    'select count(pg_advisory_xact_lock_shared(k)) from unnest($1::bigint[]) as k',
    [keys],
  );
}

/** The Contacts among `contactIds` that were erased here (their Events are refused). */
export async function erasedAmong(
  client: PoolClient,
  tenantId: string,
  contactIds: readonly string[],
): Promise<Set<string>> {
  if (contactIds.length === 0) return new Set();
  const { rows } = await client.query<{ contact_id: string }>(
    'select contact_id from erased_contacts where tenant_id = $1 and contact_id = any($2::uuid[])',
    [tenantId, [...new Set(contactIds)]],
  );
  return new Set(rows.map((r) => r.contact_id));
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
