import type { Pool } from '@herald/db';
import { uuidParam, type RouteHandlers } from '@herald/http';
import type { AnswerOf, authRoutes } from '@herald/internal-api';
import { recentlyRevokedClientIds } from '../domain/api-keys.js';
import { eventRetentionOverview, type EventRetentionDeps } from '../domain/event-retention.js';
import { assertTenantExists } from '../domain/tenants.js';
import type { manifest } from '../manifest.js';

type Routes = typeof authRoutes;

/** For Herald's other services (never routed by the public ingress). */
export function internalHandlers(deps: {
  pool: Pool;
}): Pick<RouteHandlers<typeof manifest.routes>, 'tenantExists' | 'revokedKeys'> {
  return {
    tenantExists: async (req, res) => {
      const tenantId = uuidParam(req.params.tenantId, 'no such tenant');
      await assertTenantExists(deps, tenantId);
      const body: AnswerOf<Routes['tenantExists']> = { id: tenantId };
      res.json(body);
    },
    // Every service polls this each second and refuses tokens of the listed keys.
    revokedKeys: async (_req, res) => {
      const body: AnswerOf<Routes['revokedKeys']> = {
        clientIds: await recentlyRevokedClientIds(deps),
      };
      res.json(body);
    },
  };
}

/** The events service's retention sweep reads every Tenant's retention here. */
export function eventRetentionInternalHandlers(
  deps: EventRetentionDeps,
): Pick<RouteHandlers<typeof manifest.routes>, 'eventRetentionOverview'> {
  return {
    eventRetentionOverview: async (_req, res) => {
      const body: AnswerOf<Routes['eventRetentionOverview']> = await eventRetentionOverview(deps);
      res.json(body);
    },
  };
}
