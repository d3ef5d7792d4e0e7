import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Pool } from '@herald/db';
import { errors } from '@herald/errors';
import {
  contactDataServices,
  discard,
  type ContactDataServices,
} from '../clients/contact-data-services.js';
import type { Contact } from '../data/contacts-repository.js';
import { externalId as externalIdSchema } from '../schemas.js';
import { presentContact } from './contact-snapshot.js';
import { getByExternalId, getById } from './contacts.js';

/** Names one Contact of the Tenant: by the service's id, or by the caller's externalId. */
export type ContactRef = { id: string } | { externalId: string };

/** 404 when the Tenant has no such Contact; an id or externalId that cannot exist is a 404 too. */
export async function findContact(pool: Pool, tenantId: string, ref: ContactRef): Promise<Contact> {
  if ('id' in ref) return getById(pool, tenantId, ref.id);
  // A value no write accepts (a control character, U+0000 included) names nothing, and must
  // not reach PostgreSQL, which cannot even compare U+0000.
  if (!externalIdSchema.safeParse(ref.externalId).success) throw errors.notFound('no such contact');
  return getByExternalId(pool, tenantId, ref.externalId);
}

const unavailable = (cause: unknown) =>
  errors.unavailable(
    'a service holding data about the contact is unavailable; nothing was exported; retry later',
    cause,
  );

/** Opens every participant's export, all at once; one that fails closes the others. */
async function openParticipantExports(
  services: ContactDataServices,
  tenantId: string,
  contactId: string,
): Promise<Response[]> {
  const settled = await Promise.allSettled(
    contactDataServices(services).map(async (participant) => {
      const res = await participant.send(tenantId, contactId, 'export');
      if (res.status !== 200 || !res.body) {
        await discard(res);
        throw new Error(
          `GET ${participant.url(tenantId, contactId, 'export')} answered ${res.status}`,
        );
      }
      return res;
    }),
  );
  const failed = settled.find((s) => s.status === 'rejected');
  const opened = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  if (failed) {
    await Promise.all(opened.map(discard));
    throw unavailable(failed.reason);
  }
  return opened;
}

/**
 * The export file: the Contact's line, then each participant's lines as they arrive. Nothing
 * is buffered: the next chunk is read only when the consumer asks for it. A participant whose
 * stream breaks makes the file's stream fail rather than end (a truncated file must not look
 * complete); a consumer that stops early cancels every participant's answer.
 */
async function* exportLines(
  contact: Contact,
  participants: readonly Response[],
): AsyncGenerator<Buffer | string> {
  // Answers before `taken` are being (or were) read by the loop, which closes them on exit.
  let taken = 0;
  try {
    yield `${JSON.stringify({ type: 'contact', data: presentContact(contact) })}\n`;
    for (const participant of participants) {
      taken += 1;
      const body = Readable.fromWeb(participant.body as WebReadableStream<Uint8Array>);
      let last: number | undefined;
      for await (const chunk of body as AsyncIterable<Buffer>) {
        if (chunk.length === 0) continue;
        last = chunk[chunk.length - 1];
        yield chunk;
      }
      // One participant's last line must not run into the next one's first.
      if (last !== undefined && last !== 0x0a) yield '\n';
    }
  } finally {
    await Promise.all(participants.slice(taken).map(discard));
  }
}

export interface ContactExport {
  contactId: string;
  /** The JSON Lines file, to be piped to the answer. */
  stream: Readable;
}

/**
 * GDPR access request: finds the Contact (404 when the Tenant has no such
 * Contact), then opens every participant's export before anything is written, so a participant
 * that is down is a clean 503 rather than half a file.
 */
export async function exportContact(
  deps: { pool: Pool; contactDataServices: ContactDataServices },
  tenantId: string,
  ref: ContactRef,
): Promise<ContactExport> {
  const contact = await findContact(deps.pool, tenantId, ref);
  const participants = await openParticipantExports(deps.contactDataServices, tenantId, contact.id);
  return {
    contactId: contact.id,
    stream: Readable.from(exportLines(contact, participants), { objectMode: false }),
  };
}
