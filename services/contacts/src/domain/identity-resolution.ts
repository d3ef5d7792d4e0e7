import type { Pool } from '@herald/db';
import { isUuid } from '@herald/http';
import type { ResolvedIdentity, ResolveIdentitiesRequest } from '@herald/internal-api';
import {
  contactIdsByEmails,
  contactIdsByExternalIds,
  contactIdsByIds,
  emailKey,
} from '../data/contacts-repository.js';
import { existingOrganizations } from '../data/organizations-repository.js';

/**
 * One call per events request: every identity of the batch is looked up with one indexed
 * query per kind, and the answer keeps the request's order.
 */
export async function resolveIdentities(
  pool: Pool,
  request: ResolveIdentitiesRequest,
): Promise<ResolvedIdentity[]> {
  const { tenantId, items } = request;
  // A value with U+0000 names nothing (no stored value can hold it) and PostgreSQL refuses it.
  const lookable = (v: string | undefined): v is string => !!v && !v.includes('\u0000');
  const unique = (values: Array<string | undefined>) => [...new Set(values.filter(lookable))];
  const [ids, byExternalId, byEmail, organizations] = await Promise.all([
    contactIdsByIds(
      pool,
      tenantId,
      unique(items.map((i) => i.contactId?.toLowerCase())).filter(isUuid),
    ),
    contactIdsByExternalIds(pool, tenantId, unique(items.map((i) => i.contactExternalId))),
    contactIdsByEmails(pool, tenantId, unique(items.map((i) => i.contactEmail))),
    existingOrganizations(pool, tenantId, unique(items.map((i) => i.organizationExternalId))),
  ]);
  return items.map((item) => {
    let contactId: string | null = null;
    if (item.contactId !== undefined) {
      const id = item.contactId.toLowerCase();
      contactId = ids.has(id) ? id : null;
    } else if (item.contactExternalId !== undefined)
      contactId = byExternalId.get(item.contactExternalId) ?? null;
    else if (item.contactEmail !== undefined)
      contactId = byEmail.get(emailKey(item.contactEmail)) ?? null;
    return {
      contactId,
      organizationExists:
        item.organizationExternalId === undefined
          ? null
          : organizations.has(item.organizationExternalId),
    };
  });
}
