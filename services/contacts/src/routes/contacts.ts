import type { Response } from 'express';
import { principalOf } from '@herald/auth';
import type { Pool } from '@herald/db';
import { parseOrThrow, type RouteHandlers } from '@herald/http';
import type { Contact } from '../data/contacts-repository.js';
import { presentContact } from '../domain/contact-snapshot.js';
import { getByExternalId, getById, type ContactUpserts } from '../domain/contacts.js';
import { contactWriteBody, externalId as externalIdSchema } from '../schemas.js';
import type { manifest } from '../service.js';

type Handlers = RouteHandlers<typeof manifest.routes>;

function sendContact(res: Response, contact: Contact, created = false): void {
  res.status(created ? 201 : 200).json(presentContact(contact));
}

/** Public Contact routes (docs/api-reference.md#contacts-and-identities). */
export function contactHandlers(deps: {
  pool: Pool;
  upserts: ContactUpserts;
}): Pick<Handlers, 'getContactById' | 'upsertContactByEmail' | 'getContact' | 'upsertContact'> {
  const { pool, upserts } = deps;
  return {
    getContactById: async (req, res) => {
      sendContact(res, await getById(pool, principalOf(res).tenantId, req.params.id));
    },
    upsertContactByEmail: async (req, res) => {
      const input = parseOrThrow(contactWriteBody, req.body);
      const { contact, created } = await upserts.byEmail(principalOf(res).tenantId, input);
      sendContact(res, contact, created);
    },
    getContact: async (req, res) => {
      sendContact(
        res,
        await getByExternalId(pool, principalOf(res).tenantId, req.params.externalId),
      );
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
