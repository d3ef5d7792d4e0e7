import { withTransaction, type Pool } from '@herald/db';
import { errors } from '@herald/errors';
import { deletePendingFor, enqueue } from '@herald/outbox';
import { isUuid } from '@herald/http';
import {
  contactDataServices,
  discard,
  type ContactDataServices,
} from '../clients/contact-data-services.js';
import {
  deleteContact,
  findContactById,
  hasTombstone,
  insertTombstone,
} from '../data/contacts-repository.js';
import { findContact, type ContactRef } from './export.js';
import { erasureMessages } from './kafka-messages.js';

/**
 * Asks every participant to erase what it holds about the Contact, all at once, and waits for
 * every answer; any failure is a 503 and nothing is erased here, so the Contact stays findable
 * for the retry.
 */
async function eraseAtParticipants(
  services: ContactDataServices,
  tenantId: string,
  contactId: string,
): Promise<void> {
  const settled = await Promise.allSettled(
    contactDataServices(services).map(async (participant) => {
      const res = await participant.send(tenantId, contactId, 'erase');
      await discard(res);
      if (res.status !== 204) {
        throw new Error(
          `POST ${participant.url(tenantId, contactId, 'erase')} answered ${res.status}`,
        );
      }
    }),
  );
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) {
    throw errors.unavailable(
      'a service holding data about the contact is unavailable; nothing was erased; retry later',
      failed.reason,
    );
  }
}

/**
 * GDPR erasure (docs/api-reference.md#export-and-erasure). The order makes a crash anywhere safe to retry:
 *
 * 1. find the Contact (an id the Tenant's tombstones hold is already erased: done);
 * 2. every participant erases first (idempotent there), so the Contact is still here to be
 *    found by the retry when one of them fails;
 * 3. one transaction: lock the row, delete it, drop its unsent outbox messages (they hold
 *    personal data), keep the bare id as a tombstone, enqueue the erasure's messages.
 *
 * Two erasures of one Contact at once: the second finds no row, before or after waiting for the
 * first's row lock; by id it answers like a retry (204), by externalId like any externalId that
 * names nothing (404).
 */
export async function eraseContact(
  deps: { pool: Pool; contactDataServices: ContactDataServices },
  tenantId: string,
  ref: ContactRef,
): Promise<void> {
  const { pool } = deps;
  const byId = 'id' in ref && isUuid(ref.id);
  if (byId && (await hasTombstone(pool, tenantId, ref.id))) return;
  const contact = await findContact(pool, tenantId, ref).catch(async (err: unknown) => {
    // Another erasure may have committed between the tombstone check and this lookup.
    if (byId && (await hasTombstone(pool, tenantId, ref.id))) return null;
    throw err;
  });
  if (contact === null) return;
  await eraseAtParticipants(deps.contactDataServices, tenantId, contact.id);
  const erasedHere = await withTransaction(pool, async (client) => {
    const locked = await findContactById(client, tenantId, contact.id, { forUpdate: true });
    if (!locked) return false;
    await deleteContact(client, tenantId, contact.id);
    await deletePendingFor(client, contact.id);
    await insertTombstone(client, tenantId, contact.id);
    await enqueue(client, erasureMessages(tenantId, contact.id));
    return true;
  });
  if (erasedHere) return;
  // Another erasure removed the row after step 1 (the only way a Contact leaves).
  if ('id' in ref && (await hasTombstone(pool, tenantId, contact.id))) return;
  throw errors.notFound('no such contact');
}
