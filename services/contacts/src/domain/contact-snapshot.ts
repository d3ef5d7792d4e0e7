import type { ContactSnapshot } from '@herald/messages';
import type { Contact } from '../data/contacts-repository.js';

/** The Contact object of the API: absent fields are left out, timestamps in UTC with ms. */
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
