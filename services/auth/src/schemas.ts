import { PUBLISHABLE_KEY_SCOPES, SCOPES } from '@herald/auth';
import { NOT_STORABLE, storable } from '@herald/http';
import { z } from 'zod';

const name = z
  .string()
  // The length the document states is the length sent: checked before the trim as well.
  .max(256)
  .trim()
  .min(1)
  .refine(storable, NOT_STORABLE)
  // Trimmed first: a name of whitespace alone is too short. JavaScript's whitespace spelled out,
  // so the document's pattern means the same everywhere.
  .meta({
    pattern:
      '^[^\\u0000]*[^\\u0000\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff][^\\u0000]*$',
  });

/** Request shapes, validated at the edge. */
export const createTenantBody = z.object({ name });

export const createApiKeyBody = z
  .object({
    kind: z.enum(['secret', 'publishable']),
    scopes: z.array(z.enum(SCOPES)).min(1).optional(),
    name: name.optional(),
  })
  // The rule domain/api-keys.ts enforces, stated in the document too.
  .meta({
    if: { properties: { kind: { const: 'publishable' } }, required: ['kind'] },
    then: { properties: { scopes: { items: { enum: [...PUBLISHABLE_KEY_SCOPES] } } } },
  });

/** Answer shapes: routes type their bodies with these, and the OpenAPI document shows them. */
export const tenantResponse = z.object({
  id: z.uuid(),
  name: z.string(),
  createdAt: z.iso.datetime(),
});

export const apiKeyResponse = z.object({
  clientId: z.string(),
  secret: z.string().optional().describe('secret keys only; shown once'),
  kind: z.enum(['secret', 'publishable']),
  scopes: z.array(z.enum(SCOPES)),
  createdAt: z.iso.datetime(),
});

export const tokenResponse = z.object({
  accessToken: z.string(),
  tokenType: z.literal('Bearer'),
  expiresIn: z.number().int(),
});

export type TenantResponse = z.output<typeof tenantResponse>;
export type ApiKeyResponse = z.output<typeof apiKeyResponse>;
export type TokenResponse = z.output<typeof tokenResponse>;
