import { UnresolvedIdentityError, type UnresolvedItem } from '@herald/errors';
import type { IdentityQuery, ResolvedIdentity } from '@herald/internal-api';
import type { EventInput, EventRoute } from './event-batch.js';

export type { IdentityQuery, ResolvedIdentity };

/** Resolves a whole request's identities in one call; the answers keep the queries' order. */
export type IdentityResolver = (
  tenantId: string,
  queries: readonly IdentityQuery[],
) => Promise<ResolvedIdentity[]>;

/** The query for one Event: only its route's identity fields, as sent. */
export function identityQuery(route: EventRoute, event: EventInput): IdentityQuery {
  const query: IdentityQuery = {};
  if (route === 'by-contact-id' || route === 'by-organization') {
    if (event.contactId !== undefined) query.contactId = event.contactId;
  } else if (route === 'by-external-id') {
    query.contactExternalId = event.contactExternalId!;
  } else {
    query.contactEmail = event.contactEmail!;
  }
  if (event.organizationExternalId !== undefined) {
    query.organizationExternalId = event.organizationExternalId;
  }
  return query;
}

/**
 * Whether an Event names only things that exist: its Contact (optional for an organization
 * Event, but one it names must exist) and the organization it names.
 */
export function isResolved(
  route: EventRoute,
  event: EventInput,
  answer: ResolvedIdentity,
): boolean {
  if (event.organizationExternalId !== undefined && answer.organizationExists !== true)
    return false;
  if (route === 'by-organization' && event.contactId === undefined) return true;
  return answer.contactId !== null;
}

/** One item of the 422 body: the Event's identity fields as sent, null for the others. */
export function unresolvedItem(index: number, event: EventInput): UnresolvedItem {
  return {
    index,
    eventName: event.eventName,
    contactId: event.contactId ?? null,
    contactExternalId: event.contactExternalId ?? null,
    contactEmail: event.contactEmail ?? null,
    organizationExternalId: event.organizationExternalId ?? null,
  };
}

/** The 422: one item per failed Event, in request order; nothing is recorded. */
export function refuse(items: readonly UnresolvedItem[]): never {
  throw new UnresolvedIdentityError(items);
}
