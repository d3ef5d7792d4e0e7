import { pipeline } from 'node:stream/promises';
import type { Express } from 'express';
import { requireServiceCaller, type ServiceCallers } from '@herald/auth';
import type { Pool } from '@herald/db';
import { mountRoutes, uuidParam, type Logger, type RouteHandlers } from '@herald/http';
import { eraseContactEvents } from './erasure.js';
import {
  EXPORT_LIMIT_DEFAULTS,
  exportContactEvents,
  exportSlots,
  type ExportLimits,
} from './export.js';
import { manifest } from '../manifest.js';

/** The path's Tenant and Contact ids; anything that is not a uuid names nothing (404). */
function contactPath(params: Record<string, string>): { tenantId: string; contactId: string } {
  return {
    tenantId: uuidParam(params.tenantId, 'no such contact'),
    contactId: uuidParam(params.contactId, 'no such contact'),
  };
}

/** What the internal routes need. */
export interface InternalDeps {
  /** Recording's pool: the erasure writes through it. */
  pool: Pool;
  /**
   * The exports' own pool, of `exportLimits.maxConcurrent` connections (EXPORT_MAX_CONCURRENT):
   * an export holds its connection for as long as its reader takes, so it must not take one
   * recording needs. Default `pool`, for tests that do not care.
   */
  exportPool?: Pool;
  /** How many exports stream at once, in all and per Tenant; default EXPORT_LIMIT_DEFAULTS. */
  exportLimits?: Partial<ExportLimits>;
  logger: Logger;
}

/**
 * The routes the contacts service calls for a Contact's GDPR export and erasure (docs/contacts.md,
 * docs/api-reference.md#export-and-erasure), with its own service token; never routed by the public
 * ingress.
 */
export function internalHandlers(
  deps: InternalDeps,
): Pick<RouteHandlers<typeof manifest.routes>, 'exportContactEvents' | 'eraseContactEvents'> {
  const exportPool = deps.exportPool ?? deps.pool;
  const slots = exportSlots({ ...EXPORT_LIMIT_DEFAULTS, ...deps.exportLimits });
  return {
    exportContactEvents: async (req, res) => {
      const { tenantId, contactId } = contactPath(req.params);
      // 429 or 503 with Retry-After, before any line, when too many exports are streaming.
      const lines = await exportContactEvents(exportPool, slots, tenantId, contactId);
      res.status(200).type('application/x-ndjson');
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
  deps: InternalDeps & { serviceCallers: ServiceCallers },
): void {
  const { exportContactEvents: exportRoute, eraseContactEvents: eraseRoute } = manifest.routes;
  mountRoutes(
    app,
    {
      routes: { exportContactEvents: exportRoute, eraseContactEvents: eraseRoute },
      prefixes: manifest.prefixes,
    },
    internalHandlers(deps),
    { service: requireServiceCaller(deps.serviceCallers) },
  );
}
