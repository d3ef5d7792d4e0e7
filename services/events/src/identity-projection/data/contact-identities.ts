import { hash } from 'node:crypto';
import type { Queryable } from '@herald/db';

/** How an externalId is stored and looked up: its SHA-256, never the value. */
export function externalIdDigest(externalId: string): Buffer {
  return hash('sha256', externalId, 'buffer');
}

/** What the projection knows for sure about some Contact ids and externalIds of one Tenant. */
export interface ProjectedIdentities {
  /** The asked Contact ids that exist (lower case). */
  ids: Set<string>;
  /** externalId → the Contact it names, for those named by exactly one live Contact. */
  byExternalId: Map<string, string>;
}

/** One request's lookup: some Contact ids and externalIds of one Tenant. */
interface Lookup {
  tenantId: string;
  contactIds: readonly string[];
  externalIds: readonly string[];
}

interface Row {
  tenant_id: string;
  contact_id: string;
  external_id_sha256: Buffer | null;
}

/**
 * The rows that can answer a set of lookups, across Tenants, in one statement. A Contact erased
 * here (`erased_contacts`, written by this service's own erasure before the contacts service
 * lets go of the Contact) is never returned, even when the projection has not seen its erasure
 * yet.
 */
async function selectIdentities(db: Queryable, lookups: readonly Lookup[]): Promise<Row[]> {
  const idTenants: string[] = [];
  const ids: string[] = [];
  const digestTenants: string[] = [];
  const digests: Buffer[] = [];
  for (const { tenantId, contactIds, externalIds } of lookups) {
    for (const id of contactIds) {
      idTenants.push(tenantId);
      ids.push(id);
    }
    for (const externalId of externalIds) {
      digestTenants.push(tenantId);
      digests.push(externalIdDigest(externalId));
    }
  }
  // Two index lookups, one per way of asking: an OR of the two would scan the whole table. UNION
  // answers a row once however many requests of the turn asked for it, either way.
  const { rows } = await db.query<Row>({
    name: 'events.lookup-contact-identities.2',
    text: `select ci.tenant_id, ci.contact_id, ci.external_id_sha256
     from contact_identities ci
     where (ci.tenant_id, ci.contact_id) in (select * from unnest($1::uuid[], $2::uuid[]))
       and not ci.erased
       and not exists (
         select 1 from erased_contacts e
         where e.tenant_id = ci.tenant_id and e.contact_id = ci.contact_id)
     union
     select ci.tenant_id, ci.contact_id, ci.external_id_sha256
     from contact_identities ci
     where (ci.tenant_id, ci.external_id_sha256) in (select * from unnest($3::uuid[], $4::bytea[]))
       and ci.external_id_sha256 is not null
       and not ci.erased
       and not exists (
         select 1 from erased_contacts e
         where e.tenant_id = ci.tenant_id and e.contact_id = ci.contact_id)`,
    values: [idTenants, ids, digestTenants, digests],
  });
  return rows;
}

/**
 * What one lookup learns from the rows: only its own Tenant's. An externalId two live rows claim
 * (the old Contact's erasure not yet seen, the new one's creation already) is not answered.
 */
function answerOf(lookup: Lookup, rows: readonly Row[]): ProjectedIdentities {
  const found: ProjectedIdentities = { ids: new Set(), byExternalId: new Map() };
  // digest (hex) → the asked externalId
  const asked = new Map(lookup.externalIds.map((id) => [externalIdDigest(id).toString('hex'), id]));
  const askedIds = new Set(lookup.contactIds);
  const ambiguous = new Set<string>();
  for (const row of rows) {
    if (row.tenant_id !== lookup.tenantId) continue;
    if (askedIds.has(row.contact_id)) found.ids.add(row.contact_id);
    const externalId = row.external_id_sha256 && asked.get(row.external_id_sha256.toString('hex'));
    if (externalId === undefined || externalId === null) continue;
    if (found.byExternalId.has(externalId)) ambiguous.add(externalId);
    else found.byExternalId.set(externalId, row.contact_id);
  }
  for (const externalId of ambiguous) found.byExternalId.delete(externalId);
  return found;
}

/** What the projection knows for sure about some Contact ids and externalIds of one Tenant. */
export type IdentityLookup = (
  tenantId: string,
  contactIds: readonly string[],
  externalIds: readonly string[],
) => Promise<ProjectedIdentities>;

/**
 * The projection's lookup for concurrent requests: the lookups asked in one turn of the event
 * loop go to PostgreSQL as one statement, and each gets the answer for its own Tenant only.
 * Under load this turns one round trip per request into one per turn.
 */
export function coalescedIdentityLookup(db: Queryable): IdentityLookup {
  let pending: Array<{
    lookup: Lookup;
    resolve: (found: ProjectedIdentities) => void;
    reject: (err: unknown) => void;
  }> = [];
  function flush(): void {
    const batch = pending;
    pending = [];
    selectIdentities(
      db,
      batch.map((p) => p.lookup),
    ).then(
      (rows) => batch.forEach((p) => p.resolve(answerOf(p.lookup, rows))),
      (err: unknown) => batch.forEach((p) => p.reject(err)),
    );
  }
  return (tenantId, contactIds, externalIds) => {
    const lookup = { tenantId, contactIds, externalIds };
    if (contactIds.length === 0 && externalIds.length === 0) {
      return Promise.resolve(answerOf(lookup, []));
    }
    return new Promise((resolve, reject) => {
      if (pending.length === 0) setImmediate(flush);
      pending.push({ lookup, resolve, reject });
    });
  };
}

/** A Contact's snapshot as the projection keeps it. */
export interface ContactIdentitySnapshot {
  tenantId: string;
  contactId: string;
  externalId: string | null;
  updatedAt: string;
}

/**
 * Applies Contacts' snapshots, all in one statement. Idempotent and order-proof: a snapshot older
 * than the one applied changes nothing, an externalId once stored is kept (the contacts service
 * only ever adds one), and an erased Contact stays erased. No Contact may appear twice: one
 * statement cannot update a row twice (PostgreSQL refuses it), so a caller with more snapshots of
 * one Contact applies them in calls of their own, in order.
 */
export async function upsertContactIdentities(
  db: Queryable,
  snapshots: readonly ContactIdentitySnapshot[],
): Promise<void> {
  if (snapshots.length === 0) return;
  await db.query({
    name: 'events.upsert-contact-identities.1',
    text: `insert into contact_identities (tenant_id, contact_id, external_id_sha256, updated_at)
     select s.tenant_id, s.contact_id, decode(s.digest, 'hex'), s.updated_at
     from unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[])
       as s(tenant_id, contact_id, digest, updated_at)
     on conflict (tenant_id, contact_id) do update
       set external_id_sha256 =
             coalesce(contact_identities.external_id_sha256, excluded.external_id_sha256),
           updated_at = excluded.updated_at
       where not contact_identities.erased
         and contact_identities.updated_at <= excluded.updated_at`,
    values: [
      snapshots.map((s) => s.tenantId),
      snapshots.map((s) => s.contactId),
      snapshots.map((s) =>
        s.externalId === null ? null : externalIdDigest(s.externalId).toString('hex'),
      ),
      snapshots.map((s) => s.updatedAt),
    ],
  });
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
