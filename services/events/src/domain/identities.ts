import { z } from 'zod';
import { errors, UnresolvedIdentityError, type UnresolvedItem } from '@herald/errors';
import type { EventInput, EventRoute } from './event-batch.js';

/** What one Event asks the contacts service: its route's identity field, and its organization. */
export interface IdentityQuery {
  contactId?: string;
  contactExternalId?: string;
  contactEmail?: string;
  organizationExternalId?: string;
}

/** The contacts service's answer for one query. */
export interface ResolvedIdentity {
  /** The Contact the query named, or null when it named none that exists (or none at all). */
  contactId: string | null;
  /** Whether the named organization exists; null when the query named none. */
  organizationExists: boolean | null;
}

/** Resolves a whole request's identities in one call; the answers keep the queries' order. */
export type IdentityResolver = (
  tenantId: string,
  queries: readonly IdentityQuery[],
) => Promise<ResolvedIdentity[]>;

const resolveAnswer = z.object({
  items: z.array(
    z.object({ contactId: z.string().nullable(), organizationExists: z.boolean().nullable() }),
  ),
});

/**
 * The contacts service's batch lookup (`POST /internal/v1/identities/resolve`, with the service
 * token). Unreachable, a timeout or a 5xx is a 503 with Retry-After: nothing is recorded and the
 * caller resends the request.
 */
export function contactsIdentityResolver(options: {
  contactsUrl: string;
  serviceToken: string;
  timeoutMs?: number;
}): IdentityResolver {
  const url = `${options.contactsUrl.replace(/\/+$/, '')}/internal/v1/identities/resolve`;
  const timeoutMs = options.timeoutMs ?? 3_000;
  return async (tenantId, queries) => {
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${options.serviceToken}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ tenantId, items: queries }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await res.text();
    } catch (err) {
      throw errors.unavailable(
        'cannot reach the contacts service; nothing was recorded; retry later',
        err,
      );
    }
    if (res.status >= 500) {
      throw errors.unavailable(
        `the contacts service answered ${res.status}; nothing was recorded; retry later`,
      );
    }
    if (res.status !== 200) {
      // Our own request was refused (a wrong service token, say): a fault here, not the caller's.
      throw new Error(`the contacts service answered ${res.status} to the identity lookup`);
    }
    const { items } = resolveAnswer.parse(JSON.parse(text));
    if (items.length !== queries.length) {
      throw new Error(`the contacts service answered ${items.length} items for ${queries.length}`);
    }
    return items;
  };
}

/** The query for one Event: only its route's identity fields (decisions B.4), as sent. */
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
 * Event, but one it names must exist: decisions C.6) and the organization it names.
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

/** The 422 (spec 4.4): one item per failed Event, in request order; nothing is recorded. */
export function refuse(items: readonly UnresolvedItem[]): never {
  throw new UnresolvedIdentityError(items);
}
