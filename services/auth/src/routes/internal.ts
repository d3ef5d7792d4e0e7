import type { Pool } from '@herald/db';
import { uuidParam, type RouteHandlers } from '@herald/http';
import { recentlyRevokedClientIds } from '../domain/api-keys.js';
import { assertTenantExists } from '../domain/tenants.js';
import type { manifest } from '../manifest.js';

/** For Herald's other services (never routed by the public ingress). */
export function internalHandlers(deps: {
  pool: Pool;
}): Pick<RouteHandlers<typeof manifest.routes>, 'tenantExists' | 'revokedKeys'> {
  return {
    tenantExists: async (req, res) => {
      const tenantId = uuidParam(req.params.tenantId, 'no such tenant');
      await assertTenantExists(deps, tenantId);
      res.json({ id: tenantId });
    },
    // Every service polls this each second and refuses tokens of the listed keys.
    revokedKeys: async (_req, res) => {
      const clientIds = await recentlyRevokedClientIds(deps);
      res.json({ clientIds });
    },
  };
}
