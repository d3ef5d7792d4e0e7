import type { Express } from 'express';
import { requireAdminToken } from '@herald/auth';
import { methodNotAllowed } from '@herald/errors';
import {
  recordPaymentDetails,
  recordPaymentFailure,
  subscriptionOf,
  type BillingDeps,
  type SubscriptionStatus,
} from '../domain/subscriptions.js';
import type { SubscriptionStatusResponse } from '../schemas.js';
import { tenantIdOf } from './tenant-id.js';

const statusBody = (s: SubscriptionStatus): SubscriptionStatusResponse => ({
  state: s.state,
  consecutiveFailures: s.consecutiveFailures,
});

/**
 * Operator API (decisions I): the billing rows. The POSTs take no body; one sent anyway is
 * ignored, as the key revoke route does.
 */
export function mountAdminRoutes(app: Express, deps: BillingDeps & { adminToken: string }): void {
  const admin = requireAdminToken(deps.adminToken);
  const base = '/admin/v1/tenants/:tenantId/billing';

  app
    .route(base)
    .get(admin, async (req, res) => {
      res.json(statusBody(await subscriptionOf(deps, tenantIdOf(req.params.tenantId))));
    })
    .all(admin, methodNotAllowed(['GET']));

  app
    .route(`${base}/payment-failures`)
    .post(admin, async (req, res) => {
      res.json(statusBody(await recordPaymentFailure(deps, tenantIdOf(req.params.tenantId))));
    })
    .all(admin, methodNotAllowed(['POST']));

  app
    .route(`${base}/payment-details`)
    .post(admin, async (req, res) => {
      res.json(statusBody(await recordPaymentDetails(deps, tenantIdOf(req.params.tenantId))));
    })
    .all(admin, methodNotAllowed(['POST']));
}
