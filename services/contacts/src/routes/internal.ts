import type { Pool } from '@herald/db';
import { parseOrThrow, type RouteHandlers } from '@herald/http';
import { resolveIdentities } from '../domain/identity-resolution.js';
import { contactsRoutes, type AnswerOf } from '@herald/internal-api';
import type { manifest } from '../manifest.js';

const { resolveIdentities: route } = contactsRoutes;

/** Routes for Herald's other services only: never routed by the public ingress. */
export function internalHandlers(deps: {
  identityPool: Pool;
}): Pick<RouteHandlers<typeof manifest.routes>, 'resolveIdentities'> {
  return {
    resolveIdentities: async (req, res) => {
      const body: AnswerOf<typeof route> = {
        items: await resolveIdentities(
          deps.identityPool,
          parseOrThrow(route.requestBody, req.body),
        ),
      };
      res.json(body);
    },
  };
}
