import { randomUUID } from 'node:crypto';
import {
  createGroupCommit,
  isQueryCanceled,
  withRetries,
  withStatement,
  type BatchHold,
  type GroupCommit,
  type Pool,
} from '@herald/db';
import { errors } from '@herald/errors';
import { isUuid } from '@herald/http';
import { TOPICS } from '@herald/messages';
import { context, messageTraceHeaders, trace, type Context } from '@herald/telemetry';
import {
  findContactByExternalId,
  findContactById,
  findContacts,
  findContactsByIdentity,
  upsertContacts,
  writtenOrThrown,
  type Contact,
  type ContactLookup,
  type ContactUpsert,
  type UpsertOutcome,
} from '../data/contacts-repository.js';
import {
  email as emailSchema,
  externalId as externalIdSchema,
  type ContactWrite,
} from '../schemas.js';

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
 * Concurrent upserts share a statement, and so do concurrent reads: at most this many, waiting
 * at most this long (ms) for others while batches are in flight.
 */
export const BATCH = { maxRequests: 64, maxWaitMs: 1 } as const;

/** The statement timeout cancelled the query: nothing was written, so 503 and a retry later. */
const tookTooLong = (err: unknown, message: string): unknown =>
  isQueryCanceled(err) ? errors.unavailable(message, err) : err;

interface PendingUpsert {
  upsert: Omit<ContactUpsert, 'headers'>;
  /** The request's context: its message's trace context when the batch is of another trace. */
  context: Context;
}

/**
 * The trace context an upsert's message carries: the batch's transaction (the active span)
 * when it is in the request's trace, as for an upsert alone, else the request's own (none for a
 * request outside any trace).
 */
function headersOf(pending: PendingUpsert): Record<string, string> {
  const own = trace.getSpan(pending.context)?.spanContext().traceId;
  const active = trace.getActiveSpan()?.spanContext().traceId;
  return messageTraceHeaders(own !== undefined && own === active ? undefined : pending.context);
}

export interface ContactUpserts {
  /**
   * PUT /v1/contacts/{externalId}: create or update by the caller's id. An email-only Contact
   * with this email is claimed (gains the externalId, keeps its id); an email held by another
   * Contact is a 409.
   */
  byExternalId(tenantId: string, externalId: string, input: ContactWrite): Promise<UpsertResult>;
  /** POST /v1/contacts: create or update by email; a new Contact has no externalId. */
  byEmail(tenantId: string, input: ContactWrite): Promise<UpsertResult>;
}

/**
 * Creates or updates Contacts, announcing a real change with a contact.created or
 * contact.updated message on the changed topic (keyed by the Contact's id; erasing the Contact
 * drops it unsent). Repeating an upsert changes nothing and announces nothing.
 *
 * Concurrent upserts are written together (group commit): one call and one transaction per
 * batch, each upsert all or nothing on its own. A batch locks what it can touch before it writes
 * (migration 004), so batches touching one Contact wait for each other. An upsert that loses a
 * race to create a Contact (unique violation) or meets a deadlock runs again, up to 5 times in
 * all, and then finds the winner's row to update.
 */
export function contactUpserts(
  pool: Pool,
  options: { /** Tests: keeps upserts queued until released. */ hold?: BatchHold } = {},
): ContactUpserts {
  const batches = createGroupCommit<PendingUpsert, UpsertOutcome>({
    maxWeight: BATCH.maxRequests,
    maxWaitMs: BATCH.maxWaitMs,
    hold: options.hold,
    write: (pending, { links }) =>
      withStatement(
        pool,
        // Read inside the transaction, so that a message links to the write's span.
        (db) =>
          upsertContacts(
            db,
            pending.map((p) => ({ ...p.upsert, headers: headersOf(p) })),
          ),
        { links },
      ),
  });

  async function upsert(
    tenantId: string,
    externalId: string | null,
    input: ContactWrite,
  ): Promise<UpsertResult> {
    const upsert = {
      tenantId,
      externalId,
      ...input,
      newId: randomUUID(),
      messageId: randomUUID(),
      topic: TOPICS.contactsChanged,
    };
    // A batch that failed as a whole was already retried by the group commit; these are the
    // failures of this upsert alone (a lost race to create the Contact, a deadlock).
    const outcome = await withRetries(
      () => batches.submit({ upsert, context: context.active() }).then(writtenOrThrown),
      { retryOn: ['uniqueViolation', 'deadlock', 'serializationFailure'], attempts: 5 },
    ).catch((err: unknown) => {
      throw tookTooLong(err, 'the upsert took too long; nothing changed; retry later');
    });
    if (outcome.status === 'conflict') throw emailTaken();
    return { contact: outcome.contact, created: outcome.status === 'created' };
  }

  return {
    byExternalId: (tenantId, externalId, input) => upsert(tenantId, externalId, input),
    byEmail: (tenantId, input) => upsert(tenantId, null, input),
  };
}

const noSuchContact = () => errors.notFound('no such contact');

export interface ContactReads {
  /** GET /v1/contacts/{externalId}: 404 when no Contact of the Tenant has it. */
  byExternalId(tenantId: string, externalId: string): Promise<Contact>;
  /** GET /v1/contacts/by-id/{id}: 404 when no Contact of the Tenant has it. */
  byId(tenantId: string, id: string): Promise<Contact>;
}

/**
 * Concurrent reads are looked up together, one statement per batch (as upserts are written),
 * each answered with its own Tenant's Contact only. A malformed id or externalId names no
 * Contact (404) and never reaches PostgreSQL.
 */
export function contactReads(
  pool: Pool,
  options: { /** Tests: keeps reads queued until released. */ hold?: BatchHold } = {},
): ContactReads {
  const lookups = (by: 'id' | 'externalId') =>
    createGroupCommit<ContactLookup, Contact | null>({
      maxWeight: BATCH.maxRequests,
      maxWaitMs: BATCH.maxWaitMs,
      hold: options.hold,
      write: (batch) => findContacts(pool, by, batch),
    });
  const byId = lookups('id');
  const byExternalId = lookups('externalId');
  const find = async (
    batches: GroupCommit<ContactLookup, Contact | null>,
    lookup: ContactLookup,
  ): Promise<Contact> => {
    let contact: Contact | null;
    try {
      contact = await batches.submit(lookup);
    } catch (err) {
      throw tookTooLong(err, 'the read took too long; retry later');
    }
    if (!contact) throw noSuchContact();
    return contact;
  };
  return {
    byExternalId: (tenantId, externalId) =>
      isExternalId(externalId)
        ? find(byExternalId, { tenantId, value: externalId })
        : Promise.reject(noSuchContact()),
    byId: (tenantId, id) =>
      isUuid(id)
        ? find(byId, { tenantId, value: id.toLowerCase() })
        : Promise.reject(noSuchContact()),
  };
}

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

/**
 * The Tenant's Contacts that have `identity` as their externalId, email or id. It is searched
 * for only where a Contact could have it (a valid email, a uuid): anything else never reaches
 * PostgreSQL, which cannot even compare U+0000.
 */
export function contactsWithIdentity(
  pool: Pool,
  tenantId: string,
  identity: string,
): Promise<Contact[]> {
  const externalId = isExternalId(identity) ? identity : null;
  const email = emailSchema.safeParse(identity).success ? identity : null;
  const id = isUuid(identity) ? identity.toLowerCase() : null;
  if (externalId === null && email === null && id === null) return Promise.resolve([]);
  return findContactsByIdentity(pool, tenantId, { externalId, email, id });
}

/** A malformed uuid names no Contact: 404, not 400 or 500. */
export async function getById(pool: Pool, tenantId: string, id: string): Promise<Contact> {
  const contact = isUuid(id) ? await findContactById(pool, tenantId, id) : null;
  if (!contact) throw noSuchContact();
  return contact;
}
