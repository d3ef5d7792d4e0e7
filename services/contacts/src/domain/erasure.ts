import { randomUUID } from 'node:crypto';
import { withTransaction, type Pool } from '@herald/db';
import { errors } from '@herald/errors';
import { TOPICS, type ContactErasedMessage } from '@herald/messages';
import { deletePendingFor, enqueue, type OutboxMessage } from '@herald/outbox';
import { contactsRepository as contacts } from '../data/contacts-repository.js';
import { isUuid } from './contacts.js';
import {
  callParticipant,
  discard,
  findContact,
  participantUrl,
  type ContactDataServices,
  type ContactRef,
} from './export.js';

/**
 * The messages of an erasure. Neither has a subjectId: a retry's `deletePendingFor` must not
 * drop them. The tombstone (null value) on the compacted changed topic lets Kafka's compaction
 * drop the Contact's earlier snapshots; `contact.erased` carries the bare id only.
 */
function erasureMessages(tenantId: string, contactId: string): OutboxMessage[] {
  const erased: ContactErasedMessage = {
    version: 1,
    type: 'contact.erased',
    messageId: randomUUID(),
    tenantId,
    contactId,
    occurredAt: new Date().toISOString(),
  };
  return [
    { topic: TOPICS.contactsChanged, key: contactId, value: null, subjectId: null },
    { topic: TOPICS.contactsErased, key: contactId, value: erased, subjectId: null },
  ];
}

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
    services.baseUrls.map(async (baseUrl) => {
      const url = participantUrl(baseUrl, tenantId, contactId, 'erase');
      const res = await callParticipant(services, url, 'POST');
      await discard(res);
      if (res.status !== 204) throw new Error(`POST ${url} answered ${res.status}`);
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
 * GDPR erasure (spec 3, decisions H.2). The order makes a crash anywhere safe to retry:
 *
 * 1. find the Contact (an id the Tenant's tombstones hold is already erased: done);
 * 2. every participant erases first (idempotent there), so the Contact is still here to be
 *    found by the retry when one of them fails;
 * 3. one transaction: lock the row, delete it, drop its unsent outbox messages (they hold
 *    personal data), keep the bare id as a tombstone, enqueue the erasure's messages.
 *
 * Two erasures of one Contact at once: the second waits for the first's row lock and then finds
 * no row; by id it answers like a retry (204), by externalId like any externalId that names
 * nothing (404).
 */
export async function eraseContact(
  deps: { pool: Pool; contactDataServices: ContactDataServices },
  tenantId: string,
  ref: ContactRef,
): Promise<void> {
  const { pool } = deps;
  if ('id' in ref && isUuid(ref.id) && (await contacts.hasTombstone(pool, tenantId, ref.id))) {
    return;
  }
  const contact = await findContact(pool, tenantId, ref);
  await eraseAtParticipants(deps.contactDataServices, tenantId, contact.id);
  const erasedHere = await withTransaction(pool, async (client) => {
    const locked = await contacts.findById(client, tenantId, contact.id, { forUpdate: true });
    if (!locked) return false;
    await contacts.delete(client, tenantId, contact.id);
    await deletePendingFor(client, contact.id);
    await contacts.insertTombstone(client, tenantId, contact.id);
    await enqueue(client, erasureMessages(tenantId, contact.id));
    return true;
  });
  if (erasedHere) return;
  // Another erasure removed the row after step 1 (the only way a Contact leaves).
  if ('id' in ref && (await contacts.hasTombstone(pool, tenantId, contact.id))) return;
  throw errors.notFound('no such contact');
}
