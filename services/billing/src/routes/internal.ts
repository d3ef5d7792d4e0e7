import { uuidParam, type RouteHandlers } from '@herald/http';
import type { AnswerOf, billingRoutes } from '@herald/internal-api';
import { refreshedSubscription, type BillingDeps } from '../domain/subscriptions.js';
import type { manifest } from '../manifest.js';

/** Routes for Herald's other services only: never routed by the public ingress. */
export function internalHandlers(
  deps: Pick<BillingDeps, 'pool' | 'mirror'>,
): Pick<RouteHandlers<typeof manifest.routes>, 'subscriptionSnapshot'> {
  return {
    subscriptionSnapshot: async (req, res) => {
      const row = await refreshedSubscription(
        deps,
        uuidParam(req.params.tenantId, 'no such tenant'),
      );
      const body: AnswerOf<(typeof billingRoutes)['subscriptionSnapshot']> = {
        state: row.state,
        consecutiveFailures: row.consecutiveFailures,
        version: row.version,
      };
      res.json(body);
    },
  };
}
