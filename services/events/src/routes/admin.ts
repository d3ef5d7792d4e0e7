import type { Express } from 'express';
import { requireAdminToken, type TenantDirectory } from '@herald/auth';
import type { Pool } from '@herald/db';
import { methodNotAllowed } from '@herald/errors';
import { eventNamesOf } from '../domain/catalog.js';

/** Operator API (decisions I): the event-name catalog Journey triggers are picked from. */
export function mountAdminRoutes(
  app: Express,
  deps: { pool: Pool; adminToken: string; tenantExists: TenantDirectory },
): void {
  app
    .route('/admin/v1/tenants/:tenantId/event-names')
    .get(requireAdminToken(deps.adminToken), async (req, res) => {
      const names = await eventNamesOf(deps, req.params.tenantId);
      res.json({
        eventNames: names.map((n) => ({ name: n.name, firstSeenAt: n.firstSeenAt.toISOString() })),
      });
    })
    .all(requireAdminToken(deps.adminToken), methodNotAllowed(['GET']));
}
