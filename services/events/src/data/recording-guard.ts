import type { PoolClient } from '@herald/db';
import { contactLockKey } from './contact-locks.js';

/**
 * Takes each Contact's lock shared until the transaction ends (see contact-locks.ts): an erasure
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
