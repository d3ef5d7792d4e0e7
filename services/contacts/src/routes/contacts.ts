import type { Response } from 'express';
import { principalOf } from '@herald/auth';
import { parseOrThrow, type RouteHandlers } from '@herald/http';
import type { Contact } from '../data/contacts-repository.js';
import { presentContact } from '../domain/contact-snapshot.js';
import type { ContactReads, ContactUpserts } from '../domain/contacts.js';
import { contactWriteBody, externalId as externalIdSchema } from '../schemas.js';
import type { manifest } from '../manifest.js';

type Handlers = RouteHandlers<typeof manifest.routes>;

function sendContact(res: Response, contact: Contact, created = false): void {
  res.status(created ? 201 : 200).json(presentContact(contact));
}

/** Public Contact routes (docs/api-reference.md#contacts-and-identities). */
export function contactHandlers(deps: {
  reads: ContactReads;
  upserts: ContactUpserts;
}): Pick<Handlers, 'getContactById' | 'upsertContactByEmail' | 'getContact' | 'upsertContact'> {
  const { reads, upserts } = deps;
  return {
    getContactById: async (req, res) => {
      sendContact(res, await reads.byId(principalOf(res).tenantId, req.params.id));
    },
    upsertContactByEmail: async (req, res) => {
      const input = parseOrThrow(contactWriteBody, req.body);
      const { contact, created } = await upserts.byEmail(principalOf(res).tenantId, input);
      sendContact(res, contact, created);
    },
    getContact: async (req, res) => {
      sendContact(res, await reads.byExternalId(principalOf(res).tenantId, req.params.externalId));
    },
    upsertContact: async (req, res) => {
      const externalId = parseOrThrow(externalIdSchema, req.params.externalId, 'path.externalId');
      const input = parseOrThrow(contactWriteBody, req.body);
      const { contact, created } = await upserts.byExternalId(
        principalOf(res).tenantId,
        externalId,
        input,
      );
      sendContact(res, contact, created);
    },
  };
}
