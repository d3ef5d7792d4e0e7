import type { Pool } from '@herald/db';
import { isUuid, type Logger } from '@herald/http';
import { coalescedIdentityLookup } from './data/contact-identities.js';
import type { IdentityQuery, IdentityResolver, ResolvedIdentity } from '../recording/identities.js';
import { timedLookup } from './identity-metrics.js';

/** What one query asks the projection, when it may answer it at all. */
type LocalQuery =
  | { contactId: string }
  | { externalId: string }
  /** Only an organization this replica knows exists. */
  | { organization: true };

/** Organizations remembered per replica at most; the oldest seen is forgotten first. */
const KNOWN_ORGANIZATIONS_MAX = 10_000;

/**
 * The organizations the contacts service answered as existing. Organizations are created and
 * never deleted, so one that existed once exists: remembering it is never wrong. An answer that
 * one does not exist is not remembered (it may be created at any moment).
 */
function knownOrganizations(max: number) {
  const known = new Map<string, true>();
  const key = (tenantId: string, externalId: string) => `${tenantId.toLowerCase()}\n${externalId}`;
  return {
    has: (tenantId: string, externalId: string) => known.has(key(tenantId, externalId)),
    add(tenantId: string, externalId: string): void {
      const k = key(tenantId, externalId);
      if (known.has(k)) return;
      if (known.size >= max) known.delete(known.keys().next().value!);
      known.set(k, true);
    },
  };
}

/**
 * Only a query naming a Contact by id or by externalId may be answered here, with or without an
 * organization this replica knows exists: an email can move to another Contact, and
 * organizations are announced on no topic. A value holding U+0000 (which PostgreSQL refuses) or
 * an id that is no uuid is left to contacts too.
 */
function localQuery(
  query: IdentityQuery,
  organizationKnown: (externalId: string) => boolean,
): LocalQuery | undefined {
  if (query.contactEmail !== undefined) return undefined;
  if (query.organizationExternalId !== undefined) {
    if (!organizationKnown(query.organizationExternalId)) return undefined;
    if (query.contactId === undefined && query.contactExternalId === undefined) {
      return { organization: true };
    }
  }
  if (query.contactId !== undefined) {
    if (query.contactExternalId !== undefined) return undefined;
    const id = query.contactId.toLowerCase();
    return isUuid(id) ? { contactId: id } : undefined;
  }
  if (query.contactExternalId !== undefined && !query.contactExternalId.includes('\u0000')) {
    return { externalId: query.contactExternalId };
  }
  return undefined;
}

/**
 * Resolves from the Contact identity projection (one query per turn of the event loop, for every
 * request that asks in it) and from the organizations known to exist what it knows for sure,
 * and asks `fallback` (the contacts service, one call) everything else: misses, emails,
 * organizations not known yet. A miss is never "unknown": only the contacts service's answer can refuse an
 * Event. The projection failing leaves every query to the fallback.
 */
export function projectedIdentityResolver(options: {
  pool: Pool;
  fallback: IdentityResolver;
  logger?: Logger;
}): IdentityResolver {
  const lookupContactIdentities = coalescedIdentityLookup(options.pool);
  const organizations = knownOrganizations(KNOWN_ORGANIZATIONS_MAX);
  return async (tenantId, queries) => {
    const local = queries.map((query) =>
      localQuery(query, (externalId) => organizations.has(tenantId, externalId)),
    );
    // An organization named here is one this replica knows exists.
    const organizationExists = (i: number) =>
      queries[i]!.organizationExternalId === undefined ? null : true;
    const answers: Array<ResolvedIdentity | undefined> = local.map((q, i) =>
      q !== undefined && 'organization' in q
        ? { contactId: null, organizationExists: organizationExists(i) }
        : undefined,
    );
    const ids = [...new Set(local.flatMap((q) => (q && 'contactId' in q ? [q.contactId] : [])))];
    const externalIds = [
      ...new Set(local.flatMap((q) => (q && 'externalId' in q ? [q.externalId] : []))),
    ];
    if (ids.length > 0 || externalIds.length > 0) {
      const known = await timedLookup('projection', () =>
        lookupContactIdentities(tenantId, ids, externalIds),
      ).catch((err: unknown) => {
        options.logger?.warn({ err }, 'identity projection lookup failed; asking contacts');
        return undefined;
      });
      if (known) {
        local.forEach((q, i) => {
          const contactId =
            q === undefined || 'organization' in q
              ? undefined
              : 'contactId' in q
                ? known.ids.has(q.contactId)
                  ? q.contactId
                  : undefined
                : known.byExternalId.get(q.externalId);
          if (contactId !== undefined) {
            answers[i] = { contactId, organizationExists: organizationExists(i) };
          }
        });
      }
    }
    const rest = answers.flatMap((answer, i) => (answer === undefined ? [i] : []));
    if (rest.length > 0) {
      const fetched = await options.fallback(
        tenantId,
        rest.map((i) => queries[i]!),
      );
      rest.forEach((i, k) => {
        const answer = fetched[k]!;
        const organization = queries[i]!.organizationExternalId;
        if (organization !== undefined && answer.organizationExists === true) {
          organizations.add(tenantId, organization);
        }
        answers[i] = answer;
      });
    }
    return answers as ResolvedIdentity[];
  };
}
