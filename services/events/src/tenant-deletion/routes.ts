import type { Pool } from '@herald/db';
import { uuidParam, type RouteHandlers } from '@herald/http';
import type { AnswerOf, tenantDataRoutes } from '@herald/internal-api';
import { deleteTenantData } from './tenant-deletion.js';
import type { manifest } from '../manifest.js';

/** The auth service's call for a Tenant's deletion (never routed by the public ingress). */
export function tenantDeletionHandlers(deps: {
  pool: Pool;
  /** How long one call deletes before it answers; default TENANT_DELETION_TIME_BUDGET_MS. */
  tenantDeletionTimeBudgetMs?: number;
}): Pick<RouteHandlers<typeof manifest.routes>, 'deleteTenantData'> {
  return {
    deleteTenantData: async (req, res) => {
      const tenantId = uuidParam(req.params.tenantId, 'no such tenant');
      const body: AnswerOf<(typeof tenantDataRoutes)['deleteTenantData']> = await deleteTenantData(
        deps.pool,
        tenantId,
        deps.tenantDeletionTimeBudgetMs,
      );
      res.json(body);
    },
  };
}
