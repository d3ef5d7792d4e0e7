import type { Pool } from '@herald/db';
import { contactsRepository as contacts, emailKey } from '../data/contacts-repository.js';
import { organizationsRepository } from '../data/organizations-repository.js';
import type { ResolveIdentitiesRequest } from '../schemas.js';
import { isUuid } from './contacts.js';

export interface ResolvedItem {
  /** The Contact the item named, or null when it named one that does not exist (or none). */
  contactId: string | null;
  /** Whether the named organization exists; null when the item named none. */
  organizationExists: boolean | null;
}

/**
 * One call per events request: every identity of the batch is looked up with one indexed
 * query per kind, and the answer keeps the request's order.
 */
export async function resolveIdentities(
  pool: Pool,
  request: ResolveIdentitiesRequest,
): Promise<ResolvedItem[]> {
  const { tenantId, items } = request;
  // A value with U+0000 names nothing (no stored value can hold it) and PostgreSQL refuses it.
  const lookable = (v: string | undefined): v is string => !!v && !v.includes('\u0000');
  const unique = (values: Array<string | undefined>) => [...new Set(values.filter(lookable))];
  const [ids, byExternalId, byEmail, organizations] = await Promise.all([
    contacts.idsByIds(
      pool,
      tenantId,
      unique(items.map((i) => i.contactId?.toLowerCase())).filter(isUuid),
    ),
    contacts.idsByExternalIds(pool, tenantId, unique(items.map((i) => i.contactExternalId))),
    contacts.idsByEmails(pool, tenantId, unique(items.map((i) => i.contactEmail))),
    organizationsRepository.existing(
      pool,
      tenantId,
      unique(items.map((i) => i.organizationExternalId)),
    ),
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
