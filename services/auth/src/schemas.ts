import { SCOPES } from '@herald/auth';
import { z } from 'zod';

/** Request shapes of the operator routes, validated at the edge. */
export const createTenantBody = z.object({
  name: z.string().trim().min(1).max(256),
});

export const createApiKeyBody = z.object({
  kind: z.enum(['secret', 'publishable']),
  scopes: z.array(z.enum(SCOPES)).min(1).optional(),
  name: z.string().trim().min(1).max(256).optional(),
});

export const uuidParam = z.uuid();
