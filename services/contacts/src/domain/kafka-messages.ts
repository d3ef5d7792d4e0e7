import { randomUUID } from 'node:crypto';
import { TOPICS, type ContactChangedMessage, type ContactErasedMessage } from '@herald/messages';
import type { OutboxMessage } from '@herald/outbox';
import type { Contact } from '../data/contacts-repository.js';
import { presentContact } from './contact-snapshot.js';

/** A Contact created or updated, with its snapshot; erasing the Contact drops it unsent. */
export function contactChanged(
  type: ContactChangedMessage['type'],
  contact: Contact,
): OutboxMessage {
  const value: ContactChangedMessage = {
    version: 1,
    type,
    messageId: randomUUID(),
    tenantId: contact.tenantId,
    occurredAt: contact.updatedAt.toISOString(),
    contact: presentContact(contact),
  };
  return { topic: TOPICS.contactsChanged, key: contact.id, value, subjectId: contact.id };
}

/**
 * The messages of an erasure. Neither has a subjectId: a retry's `deletePendingFor` must not
 * drop them. The tombstone (null value) on the compacted changed topic lets Kafka's compaction
 * drop the Contact's earlier snapshots; `contact.erased` carries the bare id only.
 */
export function erasureMessages(tenantId: string, contactId: string): OutboxMessage[] {
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
