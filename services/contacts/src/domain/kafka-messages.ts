import { randomUUID } from 'node:crypto';
import { TOPICS, type ContactErasedMessage } from '@herald/messages';
import type { OutboxMessage } from '@herald/outbox';

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

/**
 * Tombstones (null values) on the compacted changed topic for Contacts deleted with their Tenant:
 * compaction then drops their snapshots. No subjectId, like an erasure's.
 */
export function contactTombstones(contactIds: readonly string[]): OutboxMessage[] {
  return contactIds.map((contactId) => ({
    topic: TOPICS.contactsChanged,
    key: contactId,
    value: null,
    subjectId: null,
  }));
}
