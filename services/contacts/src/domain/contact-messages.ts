import { randomUUID } from 'node:crypto';
import { TOPICS, type ContactChangedMessage, type ContactSnapshot } from '@herald/messages';
import type { OutboxMessage } from '@herald/outbox';
import type { Contact } from '../data/contacts-repository.js';

/** The Contact object of spec 4.3: absent fields are left out, timestamps in UTC with ms. */
export function presentContact(contact: Contact): ContactSnapshot {
  return {
    id: contact.id,
    ...(contact.externalId === null ? {} : { externalId: contact.externalId }),
    email: contact.email,
    ...(contact.name === null ? {} : { name: contact.name }),
    ...(contact.phone === null ? {} : { phone: contact.phone }),
    ...(contact.timeZone === null ? {} : { timeZone: contact.timeZone }),
    createdAt: contact.createdAt.toISOString(),
    updatedAt: contact.updatedAt.toISOString(),
  };
}

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
