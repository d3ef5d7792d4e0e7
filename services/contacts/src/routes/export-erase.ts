import { pipeline } from 'node:stream/promises';
import type { Express, Response } from 'express';
import { principalOf } from '@herald/auth';
import type { Pool } from '@herald/db';
import { methodNotAllowed } from '@herald/errors';
import type { Logger } from '@herald/http';
import type { ApiPolicy } from '@herald/policy';
import { eraseContact } from '../domain/erasure.js';
import { exportContact, type ContactDataServices, type ContactRef } from '../domain/export.js';

/** GDPR export and erasure (spec 4.3, decisions H), by service id and by externalId. */
export function mountExportEraseRoutes(
  app: Express,
  options: {
    pool: Pool;
    policy: ApiPolicy;
    logger: Logger;
    serviceToken: string;
    /** Base URLs of the services holding data about Contacts; default none. */
    contactDataServiceUrls?: readonly string[] | undefined;
  },
): void {
  const contactDataServices: ContactDataServices = {
    baseUrls: options.contactDataServiceUrls ?? [],
    serviceToken: options.serviceToken,
  };
  const deps = { pool: options.pool, contactDataServices };
  const exportScope = options.policy.guard({ scope: 'contacts:export' });
  // Erasure keeps working while the subscription is suspended (spec 3, decisions G.3).
  const eraseScope = options.policy.guard({
    scope: 'contacts:erase',
    allowedWhileSuspended: true,
  });

  async function sendExport(res: Response, ref: ContactRef): Promise<void> {
    const { contactId, stream } = await exportContact(deps, principalOf(res).tenantId, ref);
    res
      .status(200)
      .type('application/x-ndjson')
      .set({
        'Content-Disposition': `attachment; filename="contact-${contactId}.ndjson"`,
        'Cache-Control': 'no-store',
      });
    try {
      await pipeline(stream, res);
    } catch (err) {
      // Too late for an error answer: the connection is cut, so the client sees an incomplete
      // transfer, never a file that merely looks complete. A client that went away is no news.
      res.destroy();
      if ((err as { code?: unknown }).code !== 'ERR_STREAM_PREMATURE_CLOSE') {
        options.logger.warn(
          { err, requestId: res.locals.requestId as unknown },
          'export stream broke',
        );
      }
    }
  }

  async function erase(res: Response, ref: ContactRef): Promise<void> {
    await eraseContact(deps, principalOf(res).tenantId, ref);
    res.status(204).end();
  }

  // The by-id routes first: `by-id` is a literal segment.
  app
    .route('/v1/contacts/by-id/:id/export')
    .get(exportScope, (req, res) => sendExport(res, { id: req.params.id }))
    .all(methodNotAllowed(['GET']));
  app
    .route('/v1/contacts/by-id/:id/erase')
    .post(eraseScope, (req, res) => erase(res, { id: req.params.id }))
    .all(methodNotAllowed(['POST']));
  app
    .route('/v1/contacts/:externalId/export')
    .get(exportScope, (req, res) => sendExport(res, { externalId: req.params.externalId }))
    .all(methodNotAllowed(['GET']));
  app
    .route('/v1/contacts/:externalId/erase')
    .post(eraseScope, (req, res) => erase(res, { externalId: req.params.externalId }))
    .all(methodNotAllowed(['POST']));
}
