import type { Express } from 'express';
import { requireServiceToken } from '@herald/auth';
import type { Pool } from '@herald/db';
import { methodNotAllowed } from '@herald/errors';
import { jsonBody, parseOrThrow } from '@herald/http';
import { resolveIdentities } from '../domain/identity-resolution.js';
import { resolveIdentitiesBody } from '../schemas.js';

/** Routes for Herald's other services only: never routed by the public ingress. */
export function mountInternalRoutes(
  app: Express,
  deps: { pool: Pool; serviceToken: string },
): void {
  app.use('/internal', requireServiceToken(deps.serviceToken));
  app
    .route('/internal/v1/identities/resolve')
    .post(...jsonBody(), async (req, res) => {
      const items = await resolveIdentities(
        deps.pool,
        parseOrThrow(resolveIdentitiesBody, req.body),
      );
      res.json({ items });
    })
    .all(methodNotAllowed(['POST']));
}
