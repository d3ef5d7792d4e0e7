import { createHash } from 'node:crypto';
import type { Queryable } from '@herald/db';

/** How an externalId is stored and looked up: its SHA-256, never the value. */
export function externalIdDigest(externalId: string): Buffer {
  return createHash('sha256').update(externalId, 'utf8').digest();
}

/** What the projection knows for sure about some Contact ids and externalIds of one Tenant. */
export interface ProjectedIdentities {
  /** The asked Contact ids that exist (lower case). */
  ids: Set<string>;
  /** externalId → the Contact it names, for those named by exactly one live Contact. */
  byExternalId: Map<string, string>;
}

/**
 * One query for a whole request. A Contact erased here (`erased_contacts`, written by this
 * service's own erasure before the contacts service lets go of the Contact) is never answered,
 * even when the projection has not seen its erasure yet. An externalId two live rows claim (the
 * old Contact's erasure not yet seen, the new one's creation already) is not answered either.
 */
export async function lookupContactIdentities(
  db: Queryable,
  tenantId: string,
  contactIds: readonly string[],
  externalIds: readonly string[],
): Promise<ProjectedIdentities> {
  const found: ProjectedIdentities = { ids: new Set(), byExternalId: new Map() };
  if (contactIds.length === 0 && externalIds.length === 0) return found;
  // digest (hex) → the asked externalId
  const asked = new Map(externalIds.map((id) => [externalIdDigest(id).toString('hex'), id]));
  const { rows } = await db.query<{ contact_id: string; external_id_sha256: Buffer | null }>(
    `select ci.contact_id, ci.external_id_sha256
     from contact_identities ci
     where ci.tenant_id = $1 and not ci.erased
       and (ci.contact_id = any($2::uuid[]) or ci.external_id_sha256 = any($3::bytea[]))
       and not exists (
         select 1 from erased_contacts e
         where e.tenant_id = ci.tenant_id and e.contact_id = ci.contact_id)`,
    [tenantId, contactIds, [...asked.keys()].map((hex) => Buffer.from(hex, 'hex'))],
  );
  const askedIds = new Set(contactIds);
  const ambiguous = new Set<string>();
  for (const row of rows) {
    if (askedIds.has(row.contact_id)) found.ids.add(row.contact_id);
    const externalId = row.external_id_sha256 && asked.get(row.external_id_sha256.toString('hex'));
    if (externalId === undefined || externalId === null) continue;
    if (found.byExternalId.has(externalId)) ambiguous.add(externalId);
    else found.byExternalId.set(externalId, row.contact_id);
  }
  for (const externalId of ambiguous) found.byExternalId.delete(externalId);
  return found;
}

/**
 * Applies a Contact's snapshot. Idempotent and order-proof: a snapshot older than the one applied
 * changes nothing, an externalId once stored is kept (the contacts service only ever adds one),
 * and an erased Contact stays erased.
 */
export async function upsertContactIdentity(
  db: Queryable,
  snapshot: { tenantId: string; contactId: string; externalId: string | null; updatedAt: string },
): Promise<void> {
  await db.query(
    `insert into contact_identities (tenant_id, contact_id, external_id_sha256, updated_at)
     values ($1, $2, $3, $4)
     on conflict (tenant_id, contact_id) do update
       set external_id_sha256 =
             coalesce(contact_identities.external_id_sha256, excluded.external_id_sha256),
           updated_at = excluded.updated_at
       where not contact_identities.erased
         and contact_identities.updated_at <= excluded.updated_at`,
    [
      snapshot.tenantId,
      snapshot.contactId,
      snapshot.externalId === null ? null : externalIdDigest(snapshot.externalId),
      snapshot.updatedAt,
    ],
  );
}

/**
 * Marks the Contact erased for good (a bare-id tombstone, its externalId dropped), whether or not
 * its snapshot arrived yet; called by the consumer and by this service's own erasure.
 */
export async function eraseContactIdentity(
  db: Queryable,
  tenantId: string,
  contactId: string,
): Promise<void> {
  await db.query(
    `insert into contact_identities (tenant_id, contact_id, erased) values ($1, $2, true)
     on conflict (tenant_id, contact_id) do update
       set erased = true, external_id_sha256 = null, updated_at = null`,
    [tenantId, contactId],
  );
}

/**
 * The compaction tombstone of herald.contacts.changed names the Contact by id alone (ids are
 * server-assigned UUIDs, unique across Tenants): marks the rows of that id erased.
 */
export async function eraseContactIdentityById(db: Queryable, contactId: string): Promise<void> {
  await db.query(
    `update contact_identities set erased = true, external_id_sha256 = null, updated_at = null
     where contact_id = $1 and not erased`,
    [contactId],
  );
}

/** The consumer group of this database (see migration 003). */
export async function contactIdentitiesGroupId(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ group_id: string }>(
    'select group_id from contact_identities_consumer',
  );
  if (!rows[0])
    throw new Error('contact_identities_consumer has no row: is migration 003 applied?');
  return rows[0].group_id;
}
