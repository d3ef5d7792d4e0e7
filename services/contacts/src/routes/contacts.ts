import type { Express, Response } from 'express';
import { principalOf } from '@herald/auth';
import type { Pool } from '@herald/db';
import { methodNotAllowed } from '@herald/errors';
import { jsonBody, parseOrThrow } from '@herald/http';
import type { ApiPolicy } from '@herald/policy';
import type { Contact } from '../data/contacts-repository.js';
import { presentContact } from '../domain/contact-messages.js';
import { getByExternalId, getById, upsertByEmail, upsertByExternalId } from '../domain/contacts.js';
import { contactWriteBody, externalId as externalIdSchema } from '../schemas.js';

function sendContact(res: Response, contact: Contact, created = false): void {
  res.status(created ? 201 : 200).json(presentContact(contact));
}

/** Public Contact routes (spec 4.3). The by-id routes are mounted first: `by-id` is a literal. */
export function mountContactRoutes(app: Express, deps: { pool: Pool; policy: ApiPolicy }): void {
  const { pool, policy } = deps;
  const read = policy.guard({ scope: 'contacts:read' });
  const write = policy.guard({ scope: 'contacts:write' });

  app
    .route('/v1/contacts/by-id/:id')
    .get(read, async (req, res) => {
      sendContact(res, await getById(pool, principalOf(res).tenantId, req.params.id));
    })
    .all(methodNotAllowed(['GET']));

  app
    .route('/v1/contacts')
    .post(write, ...jsonBody(), async (req, res) => {
      const input = parseOrThrow(contactWriteBody, req.body);
      const { contact, created } = await upsertByEmail(pool, principalOf(res).tenantId, input);
      sendContact(res, contact, created);
    })
    .all(methodNotAllowed(['POST']));

  app
    .route('/v1/contacts/:externalId')
    .get(read, async (req, res) => {
      sendContact(
        res,
        await getByExternalId(pool, principalOf(res).tenantId, req.params.externalId),
      );
    })
    .put(write, ...jsonBody(), async (req, res) => {
      const externalId = parseOrThrow(externalIdSchema, req.params.externalId, 'path.externalId');
      const input = parseOrThrow(contactWriteBody, req.body);
      const { contact, created } = await upsertByExternalId(
        pool,
        principalOf(res).tenantId,
        externalId,
        input,
      );
      sendContact(res, contact, created);
    })
    .all(methodNotAllowed(['GET', 'PUT']));
}
