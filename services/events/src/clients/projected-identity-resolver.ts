import type { Pool } from '@herald/db';
import { isUuid, type Logger } from '@herald/http';
import { coalescedIdentityLookup } from '../data/contact-identities.js';
import type { IdentityQuery, IdentityResolver, ResolvedIdentity } from '../domain/identities.js';
import { timedLookup } from './identity-metrics.js';

/** What one query asks the projection, when it may answer it at all. */
type LocalQuery = { contactId: string } | { externalId: string };

/**
 * Only a query naming a Contact by id or by externalId, and nothing else, may be answered here:
 * an email can move to another Contact, and organizations are announced on no topic. A value
 * holding U+0000 (which PostgreSQL refuses) or an id that is no uuid is left to contacts too.
 */
function localQuery(query: IdentityQuery): LocalQuery | undefined {
  if (query.organizationExternalId !== undefined || query.contactEmail !== undefined) {
    return undefined;
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
 * request that asks in it) what it knows for sure,
 * and asks `fallback` (the contacts service, one call) everything else: misses, emails,
 * organizations. A miss is never "unknown": only the contacts service's answer can refuse an
 * Event. The projection failing leaves every query to the fallback.
 */
export function projectedIdentityResolver(options: {
  pool: Pool;
  fallback: IdentityResolver;
  logger?: Logger;
}): IdentityResolver {
  const lookupContactIdentities = coalescedIdentityLookup(options.pool);
  return async (tenantId, queries) => {
    const local = queries.map(localQuery);
    const answers: Array<ResolvedIdentity | undefined> = queries.map(() => undefined);
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
            q === undefined
              ? undefined
              : 'contactId' in q
                ? known.ids.has(q.contactId)
                  ? q.contactId
                  : undefined
                : known.byExternalId.get(q.externalId);
          if (contactId !== undefined) answers[i] = { contactId, organizationExists: null };
        });
      }
    }
    const rest = answers.flatMap((answer, i) => (answer === undefined ? [i] : []));
    if (rest.length > 0) {
      const fetched = await options.fallback(
        tenantId,
        rest.map((i) => queries[i]!),
      );
      rest.forEach((i, k) => (answers[i] = fetched[k]));
    }
    return answers as ResolvedIdentity[];
  };
}
