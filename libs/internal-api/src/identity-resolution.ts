import { z } from 'zod';
import { defineInternalRoutes } from './route.js';

/**
 * The events service's batch lookup at the contacts service (with the service token): one query
 * per Event of a request, answered in the same order.
 */
export const IDENTITY_RESOLUTION_PATH = '/internal/v1/identities/resolve';

/** The most queries one lookup may carry: one request's Events at most. */
export const MAX_IDENTITY_QUERIES = 1000;

/** What one Event asks: its route's identity field, and its organization. */
export const identityQuery = z.object({
  contactId: z.string().optional(),
  contactExternalId: z.string().optional(),
  contactEmail: z.string().optional(),
  organizationExternalId: z.string().optional(),
});

export type IdentityQuery = z.output<typeof identityQuery>;

export const resolveIdentitiesRequest = z.object({
  tenantId: z.uuid(),
  items: z.array(identityQuery).max(MAX_IDENTITY_QUERIES),
});

export type ResolveIdentitiesRequest = z.output<typeof resolveIdentitiesRequest>;

/** The answer for one query. */
export const resolvedIdentity = z.object({
  /** The Contact the query named, or null when it named none that exists (or none at all). */
  contactId: z.string().nullable(),
  /** Whether the named organization exists; null when the query named none. */
  organizationExists: z.boolean().nullable(),
});

export type ResolvedIdentity = z.output<typeof resolvedIdentity>;

export const resolveIdentitiesAnswer = z.object({ items: z.array(resolvedIdentity) });

export type ResolveIdentitiesAnswer = z.output<typeof resolveIdentitiesAnswer>;

/** The contacts service's routes for the other services. */
export const contactsRoutes = defineInternalRoutes({
  resolveIdentities: {
    method: 'post',
    path: IDENTITY_RESOLUTION_PATH,
    audience: 'internal',
    access: { kind: 'service', callers: ['events'] },
    summary:
      "Resolve the Contacts and organizations a batch of Events names (the events service's one call per request)",
    requestBody: resolveIdentitiesRequest,
    answer: resolveIdentitiesAnswer,
  },
});
