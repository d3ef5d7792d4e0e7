import { uuidParam, type RouteHandlers } from '@herald/http';
import {
  recordPaymentDetails,
  recordPaymentFailure,
  subscriptionOf,
  type BillingDeps,
  type SubscriptionStatus,
} from '../domain/subscriptions.js';
import type { SubscriptionStatusResponse } from '../schemas.js';
import type { manifest } from '../manifest.js';

const statusBody = (s: SubscriptionStatus): SubscriptionStatusResponse => ({
  state: s.state,
  consecutiveFailures: s.consecutiveFailures,
});

/** Operator API: the billing rows. */
export function adminHandlers(
  deps: BillingDeps,
): Pick<
  RouteHandlers<typeof manifest.routes>,
  'subscription' | 'recordPaymentFailure' | 'recordPaymentDetails'
> {
  return {
    subscription: async (req, res) => {
      res.json(
        statusBody(await subscriptionOf(deps, uuidParam(req.params.tenantId, 'no such tenant'))),
      );
    },
    recordPaymentFailure: async (req, res) => {
      res.json(
        statusBody(
          await recordPaymentFailure(deps, uuidParam(req.params.tenantId, 'no such tenant')),
        ),
      );
    },
    recordPaymentDetails: async (req, res) => {
      res.json(
        statusBody(
          await recordPaymentDetails(deps, uuidParam(req.params.tenantId, 'no such tenant')),
        ),
      );
    },
  };
}
