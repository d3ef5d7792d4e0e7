import { z } from 'zod';
import { defineInternalRoutes } from './route.js';

/**
 * What one call of `deleteTenantData` did. A call deletes in batches, each its own transaction,
 * for a few seconds at most, then answers: `done` false means more is left, and the caller calls
 * again until it is true.
 */
export const tenantDataDeletion = z.object({
  /** Nothing of the Tenant is left in the service's database (true for a Tenant it never knew). */
  done: z.boolean(),
  /** Rows this call deleted. */
  deletedRows: z.number().int().min(0),
});

export type TenantDataDeletion = z.output<typeof tenantDataDeletion>;

/**
 * The route of every service holding a Tenant's data (contacts, events, billing), which the auth
 * service calls, at each of them, for the Tenant's deletion (docs/operations.md#offboarding-a-tenant).
 * Idempotent: deleting what is already gone is a success.
 */
export const tenantDataRoutes = defineInternalRoutes({
  deleteTenantData: {
    method: 'post',
    path: '/internal/v1/tenants/:tenantId/delete',
    audience: 'internal',
    access: { kind: 'service', callers: ['auth'] },
    summary: "Delete everything the service holds of a Tenant, a few seconds' batches per call",
    pathParameters: { tenantId: { description: 'the Tenant id' } },
    answer: tenantDataDeletion,
  },
});
