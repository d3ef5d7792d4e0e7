import { randomUUID } from 'node:crypto';
import { withStatement, type Pool } from '@herald/db';
import { errors } from '@herald/errors';
import { isUuid } from '@herald/http';
import { TOPICS } from '@herald/messages';
import { messageTraceHeaders } from '@herald/telemetry';
import {
  findContactByExternalId,
  findContactById,
  upsertContact,
  type Contact,
} from '../data/contacts-repository.js';
import { externalId as externalIdSchema, type ContactWrite } from '../schemas.js';

export interface UpsertResult {
  contact: Contact;
  created: boolean;
}

export { isUuid };
const isExternalId = (value: string) => externalIdSchema.safeParse(value).success;

const emailTaken = () =>
  errors.conflict(
    'the email belongs to another contact with a different externalId; nothing changed',
  );

/**
 * Creates or updates one Contact, announcing a real change with a contact.created or
 * contact.updated message on the changed topic (keyed by the Contact's id; erasing the Contact
 * drops it unsent). Repeating an upsert changes nothing and announces nothing. Concurrent
 * upserts of one new Contact race to insert: the loser's unique violation (or a deadlock
 * between two row locks) runs it again, and then it finds the winner's row to update.
 */
async function upsert(
  pool: Pool,
  tenantId: string,
  externalId: string | null,
  input: ContactWrite,
): Promise<UpsertResult> {
  const result = await withStatement(
    pool,
    // The trace context is read inside, so the message links to the write's span.
    (db) =>
      upsertContact(db, {
        tenantId,
        externalId,
        ...input,
        newId: randomUUID(),
        messageId: randomUUID(),
        topic: TOPICS.contactsChanged,
        headers: messageTraceHeaders(),
      }),
    { retryOn: ['uniqueViolation', 'deadlock', 'serializationFailure'], attempts: 5 },
  );
  if (result.status === 'conflict') throw emailTaken();
  return { contact: result.contact, created: result.status === 'created' };
}

/**
 * PUT /v1/contacts/{externalId}: create or update by the caller's id. An
 * email-only Contact with this email is claimed (gains the externalId, keeps its id);
 * an email held by another Contact is a 409.
 */
export const upsertByExternalId = (
  pool: Pool,
  tenantId: string,
  externalId: string,
  input: ContactWrite,
): Promise<UpsertResult> => upsert(pool, tenantId, externalId, input);

/** POST /v1/contacts: create or update by email; a new Contact has no externalId. */
export const upsertByEmail = (
  pool: Pool,
  tenantId: string,
  input: ContactWrite,
): Promise<UpsertResult> => upsert(pool, tenantId, null, input);

const noSuchContact = () => errors.notFound('no such contact');

/** An externalId no Contact can have (U+0000 cannot even reach PostgreSQL) names none: 404. */
export async function getByExternalId(
  pool: Pool,
  tenantId: string,
  externalId: string,
): Promise<Contact> {
  const contact = isExternalId(externalId)
    ? await findContactByExternalId(pool, tenantId, externalId)
    : null;
  if (!contact) throw noSuchContact();
  return contact;
}

/** A malformed uuid names no Contact: 404, not 400 or 500. */
export async function getById(pool: Pool, tenantId: string, id: string): Promise<Contact> {
  const contact = isUuid(id) ? await findContactById(pool, tenantId, id) : null;
  if (!contact) throw noSuchContact();
  return contact;
}
