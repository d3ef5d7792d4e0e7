import type { Express } from 'express';
import { requireServiceToken } from '@herald/auth';
import { methodNotAllowed } from '@herald/errors';
import { refreshedSubscription, type BillingDeps } from '../domain/subscriptions.js';
import type { SubscriptionSnapshotResponse } from '../schemas.js';
import { tenantIdOf } from './tenant-id.js';

/** Routes for Herald's other services only: never routed by the public ingress. */
export function mountInternalRoutes(
  app: Express,
  deps: Pick<BillingDeps, 'pool' | 'mirror'> & { serviceToken: string },
): void {
  app.use('/internal', requireServiceToken(deps.serviceToken));
  app
    .route('/internal/v1/tenants/:tenantId/subscription')
    .get(async (req, res) => {
      const row = await refreshedSubscription(deps, tenantIdOf(req.params.tenantId));
      const body: SubscriptionSnapshotResponse = {
        state: row.state,
        consecutiveFailures: row.consecutiveFailures,
        version: row.version,
      };
      res.json(body);
    })
    .all(methodNotAllowed(['GET']));
}
