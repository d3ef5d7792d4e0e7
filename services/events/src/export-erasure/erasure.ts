import { withTransaction, type Pool } from '@herald/db';
import { deletePendingFor } from '@herald/outbox';
import { allowLongErasure, deleteContactEvents } from './data/contact-erasure.js';
import { eraseContactIdentity } from '../identity-projection/data/contact-identities.js';
import { lockContactExclusively, markContactErased } from './data/erasure-fence.js';

/**
 * The Events part of a Contact's erasure (nothing about it may remain), idempotent. In one transaction:
 *
 * 1. take the Contact's lock exclusively: the recordings of its Events in flight commit first
 *    (their Events are then deleted below), later ones wait for this commit;
 * 2. remember the Contact as erased: those later recordings then refuse its Events (422);
 * 3. delete its Events (with their raw dedupKeys) and their outbox messages not yet published
 *    (they hold the properties). Their dedup claims stay: they hold only a hash of the key and
 *    expire with their window, so a resent key is a duplicate whether Redis is up or not.
 *
 * So no Event about the Contact survives, however it races with recording.
 */
export async function eraseContactEvents(
  pool: Pool,
  tenantId: string,
  contactId: string,
): Promise<{ deletedEvents: number }> {
  return withTransaction(pool, async (client) => {
    await allowLongErasure(client);
    await lockContactExclusively(client, tenantId, contactId);
    await markContactErased(client, tenantId, contactId);
    // The identity projection stops answering for it now, before contact.erased arrives.
    await eraseContactIdentity(client, tenantId, contactId);
    const deletedEvents = await deleteContactEvents(client, tenantId, contactId);
    await deletePendingFor(client, contactId);
    return { deletedEvents };
  });
}
