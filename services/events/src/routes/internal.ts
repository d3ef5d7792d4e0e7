import { pipeline } from 'node:stream/promises';
import type { Express } from 'express';
import { requireServiceToken } from '@herald/auth';
import type { Pool } from '@herald/db';
import { mountRoutes, uuidParam, type Logger, type RouteHandlers } from '@herald/http';
import { eraseContactEvents } from '../domain/erasure.js';
import { exportContactEvents } from '../domain/export.js';
import { manifest } from '../service.js';

/** The path's Tenant and Contact ids; anything that is not a uuid names nothing (404). */
function contactPath(params: Record<string, string>): { tenantId: string; contactId: string } {
  return {
    tenantId: uuidParam(params.tenantId, 'no such contact'),
    contactId: uuidParam(params.contactId, 'no such contact'),
  };
}

/**
 * The routes the contacts service calls for a Contact's GDPR export and erasure (docs/contacts.md,
 * docs/api-reference.md#export-and-erasure), with the service token; never routed by the public ingress.
 */
export function internalHandlers(deps: {
  pool: Pool;
  logger: Logger;
}): Pick<RouteHandlers<typeof manifest.routes>, 'exportContactEvents' | 'eraseContactEvents'> {
  return {
    exportContactEvents: async (req, res) => {
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
    },
    eraseContactEvents: async (req, res) => {
      const { tenantId, contactId } = contactPath(req.params);
      await eraseContactEvents(deps.pool, tenantId, contactId);
      res.status(204).end();
    },
  };
}

/** The internal routes alone, as the app mounts them (for tests of the contacts side). */
export function mountInternalRoutes(
  app: Express,
  deps: { pool: Pool; serviceToken: string; logger: Logger },
): void {
  const { exportContactEvents: exportRoute, eraseContactEvents: eraseRoute } = manifest.routes;
  mountRoutes(
    app,
    {
      routes: { exportContactEvents: exportRoute, eraseContactEvents: eraseRoute },
      prefixes: manifest.prefixes,
    },
    internalHandlers(deps),
    { service: requireServiceToken(deps.serviceToken) },
  );
}
