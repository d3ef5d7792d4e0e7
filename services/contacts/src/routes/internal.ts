import type { Pool } from '@herald/db';
import { parseOrThrow, type RouteHandlers } from '@herald/http';
import { resolveIdentities } from '../domain/identity-resolution.js';
import { resolveIdentitiesRequest as resolveIdentitiesBody } from '@herald/internal-api';
import type { manifest } from '../manifest.js';

/** Routes for Herald's other services only: never routed by the public ingress. */
export function internalHandlers(deps: {
  identityPool: Pool;
}): Pick<RouteHandlers<typeof manifest.routes>, 'resolveIdentities'> {
  return {
    resolveIdentities: async (req, res) => {
      const items = await resolveIdentities(
        deps.identityPool,
        parseOrThrow(resolveIdentitiesBody, req.body),
      );
      res.json({ items });
    },
  };
}
