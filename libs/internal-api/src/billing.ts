import { z } from 'zod';
import { defineInternalRoutes } from './route.js';

/** A Tenant's subscription as billing holds it in PostgreSQL, the source of the Redis mirror. */
export const subscriptionSnapshot = z.object({
  state: z.enum(['active', 'suspended']),
  consecutiveFailures: z.number().int().min(0),
  /** +1 on every change; 0 for a Tenant that never had a billing event. */
  version: z.number().int().min(0),
});

/** The billing service's routes for the other services. */
export const billingRoutes = defineInternalRoutes({
  // The other services ask here when their Redis copy is missing.
  subscriptionSnapshot: {
    method: 'get',
    path: '/internal/v1/tenants/:tenantId/subscription',
    audience: 'internal',
    // the services with public routes, when their Redis copy cannot tell
    access: { kind: 'service', callers: ['contacts', 'events'] },
    summary: "A Tenant's subscription with its version, refreshed into the mirror",
    pathParameters: { tenantId: { description: 'the Tenant id' } },
    answer: subscriptionSnapshot,
  },
});
