import { PUBLISHABLE_KEY_SCOPES, SCOPES } from '@herald/auth';
import { NOT_STORABLE, nextCursor, pageQuery, storable } from '@herald/http';
import { z } from 'zod';
import { EVENT_RETENTION_DAYS } from './domain/event-retention.js';

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

/** At most this many browser Origins per publishable key. */
export const MAX_ALLOWED_ORIGINS = 20;

/**
 * A browser Origin exactly as browsers send it: `https://shop.example.com`, a port when not the
 * default; no path, query or trailing slash. Compared with the request's Origin header as is.
 */
const browserOrigin = z
  .string()
  .max(2048)
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
    } catch {
      return false;
    }
  }, 'must be an Origin such as https://shop.example.com (scheme, lower-case host, port only when not the default; no path)')
  .meta({ format: 'uri', example: 'https://shop.example.com' });

export const createApiKeyBody = z
  .object({
    kind: z.enum(['secret', 'publishable']),
    scopes: z.array(z.enum(SCOPES)).min(1).optional(),
    name: name.optional(),
    identifierLookup: z
      .boolean()
      .optional()
      .describe(
        'Publishable keys only (default false; a secret key ignores it, as its answer shows). Lets the key record Events by `contactEmail`, `contactExternalId` and `organizationExternalId`. Such a key tells anyone who holds it whether an email or externalId is a Contact (a 422 names the ones that are not): give it only to pages whose visitors may know that.',
      ),
    allowedOrigins: z
      .array(browserOrigin)
      .max(MAX_ALLOWED_ORIGINS)
      .optional()
      .describe(
        'Publishable keys only (a secret key ignores it, as its answer shows). The browser Origins its tokens work from (403 from any other, and without an Origin header); absent or empty: any.',
      ),
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
  identifierLookup: z
    .boolean()
    .optional()
    .describe('publishable keys only: whether it may name Contacts by email or externalId'),
  allowedOrigins: z
    .array(z.string())
    .optional()
    .describe('publishable keys only: the browser Origins its tokens work from; empty: any'),
  createdAt: z.iso.datetime(),
});

/** A page of Tenants: at most this many, 50 unless `limit` says. */
export const TENANT_PAGE = { default: 50, max: 100 } as const;

export const listTenantsQuery = z.object({
  search: z
    .string()
    .trim()
    .min(1)
    .max(256)
    .optional()
    .describe("a part of the Tenant's name (any case), or its whole id"),
  ...pageQuery('Tenants', TENANT_PAGE),
});

export const tenantListResponse = z.object({
  tenants: z.array(tenantResponse).describe('newest first'),
  nextCursor,
});

export const listedApiKey = apiKeyResponse.omit({ secret: true }).extend({
  name: z.string().nullable(),
  revokedAt: z.iso.datetime().nullable().describe('when it was revoked; `null`: it works'),
});

export const apiKeyListResponse = z.object({
  apiKeys: z
    .array(listedApiKey)
    .describe('every key of the Tenant, revoked ones included, newest first; never a secret'),
});

/** A Tenant's Event retention, as read and as set (docs/operations.md#how-long-an-event-is-kept). */
export const eventRetentionResponse = z.object({
  days: z
    .number()
    .int()
    .describe("how long the Tenant's Events are kept, in days from their `receivedAt`"),
  source: z
    .enum(['tenant', 'default'])
    .describe("`tenant`: set for this Tenant; `default`: the installation's default applies"),
  defaultDays: z.number().int().describe("the installation's default, in days"),
});

export const setEventRetentionBody = z.object({
  days: z
    .number()
    .int()
    .min(EVENT_RETENTION_DAYS.min)
    .max(EVENT_RETENTION_DAYS.max)
    .nullable()
    .describe(
      "how long to keep the Tenant's Events, in whole days; `null`: the installation's default, now and after it changes",
    ),
});

/** A Tenant's deletion, accepted (202) and under way until the Tenant is gone (404). */
export const tenantDeletionResponse = z.object({
  id: z.uuid(),
  status: z
    .literal('deleting')
    .describe('the deletion goes on in the background; once done, the Tenant is a 404'),
  requestedAt: z.iso
    .datetime()
    .describe("when the deletion was first asked for: the Tenant's keys were revoked then"),
});

export const tokenResponse = z.object({
  accessToken: z.string(),
  tokenType: z.literal('Bearer'),
  expiresIn: z.number().int(),
});

export type TenantResponse = z.output<typeof tenantResponse>;
export type TenantListResponse = z.output<typeof tenantListResponse>;
export type ApiKeyListResponse = z.output<typeof apiKeyListResponse>;
export type ApiKeyResponse = z.output<typeof apiKeyResponse>;
export type TokenResponse = z.output<typeof tokenResponse>;
export type TenantDeletionResponse = z.output<typeof tenantDeletionResponse>;
export type EventRetentionResponse = z.output<typeof eventRetentionResponse>;
