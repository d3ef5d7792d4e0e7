import { SCOPES } from '@herald/auth';
import { z } from 'zod';

/** Request and response shapes of the auth service's routes, the one source for both. */
export const createTenantBody = z.object({
  name: z.string().trim().min(1).max(256),
});

export const createApiKeyBody = z.object({
  kind: z.enum(['secret', 'publishable']),
  scopes: z.array(z.enum(SCOPES)).min(1).optional(),
  name: z.string().trim().min(1).max(256).optional(),
});

export const uuidParam = z.uuid();

export const tenantResponse = z.object({
  id: z.uuid(),
  name: z.string(),
  createdAt: z.iso.datetime(),
});

export const apiKeyResponse = z.object({
  clientId: z.string(),
  secret: z.string().optional(),
  kind: z.enum(['secret', 'publishable']),
  scopes: z.array(z.enum(SCOPES)),
  createdAt: z.iso.datetime(),
});

export const tokenResponse = z.object({
  accessToken: z.string(),
  tokenType: z.literal('Bearer'),
  expiresIn: z.number().int(),
});
