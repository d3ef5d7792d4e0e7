import { pipeline } from 'node:stream/promises';
import type { Express } from 'express';
import { requireServiceToken } from '@herald/auth';
import type { Pool } from '@herald/db';
import { errors, methodNotAllowed } from '@herald/errors';
import type { Logger } from '@herald/http';
import { eraseContactEvents } from '../domain/erasure.js';
import { exportContactEvents } from '../domain/export.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The path's Tenant and Contact ids; anything that is not a uuid names nothing (404). */
function contactPath(params: Record<string, string>): { tenantId: string; contactId: string } {
  const { tenantId = '', contactId = '' } = params;
  if (!UUID.test(tenantId) || !UUID.test(contactId)) throw errors.notFound('no such contact');
  return { tenantId: tenantId.toLowerCase(), contactId: contactId.toLowerCase() };
}

/**
 * The routes the contacts service calls for a Contact's GDPR export and erasure (docs/contacts.md,
 * decisions H), with the service token; never routed by the public ingress.
 */
export function mountInternalRoutes(
  app: Express,
  deps: { pool: Pool; serviceToken: string; logger: Logger },
): void {
  app.use('/internal', requireServiceToken(deps.serviceToken));

  app
    .route('/internal/v1/tenants/:tenantId/contacts/:contactId/export')
    .get(async (req, res) => {
      const { tenantId, contactId } = contactPath(req.params);
      const lines = await exportContactEvents(deps.pool, tenantId, contactId);
      res.status(200).type('application/x-ndjson').set('Cache-Control', 'no-store');
      try {
        await pipeline(lines, res);
      } catch (err) {
        // Too late for an error answer: cutting the connection tells the contacts service the
        // file is incomplete. A reader that went away is no news.
        res.destroy();
        if ((err as { code?: unknown }).code !== 'ERR_STREAM_PREMATURE_CLOSE') {
          deps.logger.warn(
            { err, requestId: res.locals.requestId as unknown },
            'event export stream broke',
          );
        }
      }
    })
    .all(methodNotAllowed(['GET']));

  app
    .route('/internal/v1/tenants/:tenantId/contacts/:contactId/erase')
    .post(async (req, res) => {
      const { tenantId, contactId } = contactPath(req.params);
      await eraseContactEvents(deps.pool, tenantId, contactId);
      res.status(204).end();
    })
    .all(methodNotAllowed(['POST']));
}
