import { randomUUID } from 'node:crypto';
import { withTransaction, type Pool, type PoolClient } from '@herald/db';
import { errors } from '@herald/errors';
import { enqueue } from '@herald/outbox';
import { isUuid } from '@herald/http';
import {
  emailKey,
  findContactByEmail,
  findContactByExternalId,
  findContactById,
  insertContact,
  lockContactsForUpsert,
  updateContact,
  type Contact,
  type ContactFields,
} from '../data/contacts-repository.js';
import { externalId as externalIdSchema, type ContactWrite } from '../schemas.js';
import { contactChanged } from './kafka-messages.js';

export interface UpsertResult {
  contact: Contact;
  created: boolean;
}

export { isUuid };
const isExternalId = (value: string) => externalIdSchema.safeParse(value).success;

// Concurrent upserts of one new Contact race to insert; the loser's unique violation (or a
// deadlock between two row locks) is retried, and then finds the winner's row to update.
const retryingTransaction = <T>(pool: Pool, fn: (client: PoolClient) => Promise<T>) =>
  withTransaction(pool, fn, {
    retryOn: ['uniqueViolation', 'deadlock', 'serializationFailure'],
    attempts: 5,
  });

/** Fields after the write: left out keeps the stored value, null clears it. */
function merged(current: Contact | null, input: ContactWrite): ContactFields {
  return {
    email: input.email,
    name: input.name === undefined ? (current?.name ?? null) : input.name,
    phone: input.phone === undefined ? (current?.phone ?? null) : input.phone,
    timeZone: input.timeZone === undefined ? (current?.timeZone ?? null) : input.timeZone,
  };
}

function unchanged(current: Contact, next: ContactFields & { externalId: string | null }): boolean {
  return (
    current.email === next.email &&
    current.name === next.name &&
    current.phone === next.phone &&
    current.timeZone === next.timeZone &&
    current.externalId === next.externalId
  );
}

/** Updates (and announces) only a real change, so repeating an upsert changes nothing. */
async function update(
  client: PoolClient,
  current: Contact,
  next: ContactFields & { externalId: string | null },
) {
  if (unchanged(current, next)) return current;
  // `current` is locked in this transaction: the row is still there.
  const updated = (await updateContact(client, current.tenantId, current.id, next))!;
  await enqueue(client, [contactChanged('contact.updated', updated)]);
  return updated;
}

async function create(
  client: PoolClient,
  tenantId: string,
  externalId: string | null,
  fields: ContactFields,
) {
  const contact = await insertContact(client, {
    id: randomUUID(),
    tenantId,
    externalId,
    ...fields,
  });
  await enqueue(client, [contactChanged('contact.created', contact)]);
  return contact;
}

const emailTaken = () =>
  errors.conflict(
    'the email belongs to another contact with a different externalId; nothing changed',
  );

/**
 * PUT /v1/contacts/{externalId}: create or update by the caller's id. An
 * email-only Contact with this email is claimed (gains the externalId, keeps its id);
 * an email held by another Contact is a 409.
 */
export function upsertByExternalId(
  pool: Pool,
  tenantId: string,
  externalId: string,
  input: ContactWrite,
): Promise<UpsertResult> {
  return retryingTransaction(pool, async (client) => {
    const locked = await lockContactsForUpsert(client, tenantId, externalId, input.email);
    const byExternalId = locked.find((c) => c.externalId === externalId) ?? null;
    const byEmail = locked.find((c) => emailKey(c.email) === emailKey(input.email)) ?? null;
    if (byExternalId) {
      if (byEmail && byEmail.id !== byExternalId.id) throw emailTaken();
      const next = { ...merged(byExternalId, input), externalId };
      return { contact: await update(client, byExternalId, next), created: false };
    }
    if (byEmail) {
      if (byEmail.externalId !== null) throw emailTaken();
      const next = { ...merged(byEmail, input), externalId };
      return { contact: await update(client, byEmail, next), created: false };
    }
    return {
      contact: await create(client, tenantId, externalId, merged(null, input)),
      created: true,
    };
  });
}

/** POST /v1/contacts: create or update by email; a new Contact has no externalId. */
export function upsertByEmail(
  pool: Pool,
  tenantId: string,
  input: ContactWrite,
): Promise<UpsertResult> {
  return retryingTransaction(pool, async (client) => {
    const byEmail = await findContactByEmail(client, tenantId, input.email, { forUpdate: true });
    if (byEmail) {
      const next = { ...merged(byEmail, input), externalId: byEmail.externalId };
      return { contact: await update(client, byEmail, next), created: false };
    }
    return { contact: await create(client, tenantId, null, merged(null, input)), created: true };
  });
}

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
