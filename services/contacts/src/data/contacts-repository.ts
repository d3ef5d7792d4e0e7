import { hash } from 'node:crypto';
import type { Queryable } from '@herald/db';

export interface Contact {
  id: string;
  tenantId: string;
  externalId: string | null;
  email: string;
  name: string | null;
  phone: string | null;
  timeZone: string | null;
  createdAt: Date;
  updatedAt: Date;
}

interface ContactRow {
  id: string;
  tenant_id: string;
  external_id: string | null;
  email: string;
  name: string | null;
  phone: string | null;
  time_zone: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, tenant_id, external_id, email, name, phone, time_zone, created_at, updated_at';

const toContact = (row: ContactRow): Contact => ({
  id: row.id,
  tenantId: row.tenant_id,
  externalId: row.external_id,
  email: row.email,
  name: row.name,
  phone: row.phone,
  timeZone: row.time_zone,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** Emails are unique per Tenant and match case-insensitively; the stored key is the lower-cased address. */
export const emailKey = (email: string) => email.toLowerCase();

async function one(db: Queryable, sql: string, params: unknown[]): Promise<Contact | null> {
  const { rows } = await db.query<ContactRow>(sql, params);
  return rows[0] ? toContact(rows[0]) : null;
}

// Every query is scoped by tenant: no id reaches another Tenant's Contact.

export const findContactById = (
  db: Queryable,
  tenantId: string,
  id: string,
  opts: { forUpdate?: boolean } = {},
) =>
  one(
    db,
    `select ${COLUMNS} from contacts where tenant_id = $1 and id = $2${opts.forUpdate ? ' for update' : ''}`,
    [tenantId, id],
  );

export const findContactByExternalId = (
  db: Queryable,
  tenantId: string,
  externalId: string,
  opts: { forUpdate?: boolean } = {},
) =>
  one(
    db,
    `select ${COLUMNS} from contacts where tenant_id = $1 and external_id = $2${opts.forUpdate ? ' for update' : ''}`,
    [tenantId, externalId],
  );

/** The Tenant's Contacts with any of these identities (each may be null: not searched by). */
export async function findContactsByIdentity(
  db: Queryable,
  tenantId: string,
  identity: { externalId: string | null; email: string | null; id: string | null },
): Promise<Contact[]> {
  const { rows } = await db.query<ContactRow>(
    `select ${COLUMNS} from contacts
      where tenant_id = $1 and (external_id = $2 or email_key = $3 or id = $4::uuid)
      order by created_at, id`,
    [
      tenantId,
      identity.externalId,
      identity.email === null ? null : emailKey(identity.email),
      identity.id,
    ],
  );
  return rows.map(toContact);
}

/** One Contact looked up by its Tenant and its id or externalId. */
export interface ContactLookup {
  tenantId: string;
  /** The id (`by: 'id'`, a uuid) or the externalId. */
  value: string;
}

// Named statements, planned once per connection: a nested loop looking each pair up through its
// unique index (test/component/batching.test.ts checks the plan).
const FIND_MANY = {
  id: {
    name: 'contacts.find_by_ids.1',
    text: `select l.ord::int as ord, c.* from unnest($1::uuid[], $2::uuid[]) with ordinality
      as l(tenant_id, value, ord) cross join lateral (select ${COLUMNS} from contacts
      where tenant_id = l.tenant_id and id = l.value) c`,
  },
  externalId: {
    name: 'contacts.find_by_external_ids.1',
    text: `select l.ord::int as ord, c.* from unnest($1::uuid[], $2::text[]) with ordinality
      as l(tenant_id, value, ord) cross join lateral (select ${COLUMNS} from contacts
      where tenant_id = l.tenant_id and external_id = l.value) c`,
  },
} as const;

/**
 * Several lookups in one statement: each answer in its lookup's place, null when no Contact of
 * that Tenant has that id (or externalId). Ids must be uuids.
 */
export async function findContacts(
  db: Queryable,
  by: 'id' | 'externalId',
  lookups: readonly ContactLookup[],
): Promise<Array<Contact | null>> {
  const { rows } = await db.query<ContactRow & { ord: number }>({
    ...FIND_MANY[by],
    values: [lookups.map((l) => l.tenantId), lookups.map((l) => l.value)],
  });
  const found: Array<Contact | null> = lookups.map(() => null);
  for (const row of rows) found[row.ord - 1] = toContact(row);
  return found;
}

/** What an upsert asks: the Tenant, which Contact (by externalId, or by email), the fields. */
export interface ContactUpsert {
  tenantId: string;
  /** PUT's externalId; null for an upsert by email, which keeps a found Contact's externalId. */
  externalId: string | null;
  email: string;
  /** The optional fields the body carried: null clears one, left out keeps the stored value. */
  name?: string | null;
  phone?: string | null;
  timeZone?: string | null;
  /** The id a new Contact gets. */
  newId: string;
  /** The id of the contact.created/contact.updated message a write enqueues. */
  messageId: string;
  topic: string;
  /** The outbox message's headers (its trace context). */
  headers: Record<string, string>;
}

export type UpsertStatus = 'created' | 'updated' | 'unchanged' | 'conflict';

/** What one upsert came to; `failed` wrote nothing and holds the SQLSTATE PostgreSQL raised. */
export type UpsertOutcome =
  | { status: 'conflict' }
  | { status: Exclude<UpsertStatus, 'conflict'>; contact: Contact }
  | { status: 'failed'; code: string; message: string };

interface UpsertRow {
  o_status: UpsertStatus | 'failed';
  o_id: string;
  o_external_id: string | null;
  o_email: string;
  o_name: string | null;
  o_phone: string | null;
  o_time_zone: string | null;
  o_created_at: Date;
  o_updated_at: Date;
  o_code: string | null;
  o_message: string | null;
}

// A named statement: each connection parses and plans the call once, then only binds it.
const UPSERT_STATEMENT = {
  name: 'contacts.upsert_contact.batch.1',
  text: `select * from upsert_contact($1::bigint[], $2::text[], $3::uuid[], $4::boolean[],
    $5::text[], $6::text[], $7::text[], $8::text[], $9::boolean[], $10::text[], $11::boolean[],
    $12::text[], $13::boolean[], $14::uuid[], $15::uuid[], $16::jsonb[])`,
};

/**
 * The 64-bit advisory lock keys (as text, for `bigint[]`) of the identities the upserts name:
 * the Tenant with the externalId, the Tenant with the email key. Distinct and sorted, so every
 * batch takes them in one order. A hash collision only makes two upserts wait for each other.
 */
function identityLockKeys(upserts: readonly ContactUpsert[]): string[] {
  const keys = new Set<bigint>();
  const add = (text: string) =>
    keys.add(hash('sha256', `herald.contacts.identity:${text}`, 'buffer').readBigInt64BE(0));
  for (const u of upserts) {
    const tenant = u.tenantId.toLowerCase();
    if (u.externalId !== null) add(`${tenant}:x:${u.externalId}`);
    add(`${tenant}:e:${emailKey(u.email)}`);
  }
  return [...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map(String);
}

/**
 * Upserts in one round trip and one transaction: the array form of `upsert_contact`
 * (migrations/004) runs the one-upsert function (migrations/003) for each, which locks,
 * decides, writes the row with its outbox message, and answers what it did. `conflict` writes
 * nothing, and neither does `unchanged` or `failed`; one upsert failing leaves the others
 * written. Every lookup in it names the Tenant.
 */
export async function upsertContacts(
  db: Queryable,
  upserts: readonly ContactUpsert[],
): Promise<UpsertOutcome[]> {
  const field = <T>(pick: (u: ContactUpsert) => T) => upserts.map(pick);
  const { rows } = await db.query<UpsertRow>({
    ...UPSERT_STATEMENT,
    values: [
      identityLockKeys(upserts),
      field((u) => u.topic),
      field((u) => u.tenantId),
      field((u) => u.externalId !== null),
      field((u) => u.externalId),
      field((u) => u.email),
      field((u) => emailKey(u.email)),
      field((u) => u.name ?? null),
      field((u) => u.name !== undefined),
      field((u) => u.phone ?? null),
      field((u) => u.phone !== undefined),
      field((u) => u.timeZone ?? null),
      field((u) => u.timeZone !== undefined),
      field((u) => u.newId),
      field((u) => u.messageId),
      field((u) => JSON.stringify(u.headers)),
    ],
  });
  if (rows.length !== upserts.length)
    throw new Error('upsert_contact answered an unexpected result');
  return rows.map((row, i): UpsertOutcome => {
    switch (row.o_status) {
      case 'conflict':
        return { status: 'conflict' };
      case 'failed':
        return { status: 'failed', code: row.o_code ?? 'XX000', message: row.o_message ?? '' };
      default:
        return {
          status: row.o_status,
          contact: {
            id: row.o_id,
            tenantId: upserts[i]!.tenantId,
            externalId: row.o_external_id,
            email: row.o_email,
            name: row.o_name,
            phone: row.o_phone,
            timeZone: row.o_time_zone,
            createdAt: row.o_created_at,
            updatedAt: row.o_updated_at,
          },
        };
    }
  });
}

/** One upsert as `upsertContacts` writes it; its failure is thrown, as by a statement of its own. */
export async function upsertContact(
  db: Queryable,
  upsert: ContactUpsert,
): Promise<Exclude<UpsertOutcome, { status: 'failed' }>> {
  const [outcome] = await upsertContacts(db, [upsert]);
  return writtenOrThrown(outcome!);
}

/** The outcome of an upsert that did not fail; a failed one is thrown with its SQLSTATE. */
export function writtenOrThrown(
  outcome: UpsertOutcome,
): Exclude<UpsertOutcome, { status: 'failed' }> {
  if (outcome.status === 'failed') {
    throw Object.assign(new Error(outcome.message), { code: outcome.code });
  }
  return outcome;
}

export async function deleteContact(db: Queryable, tenantId: string, id: string): Promise<void> {
  await db.query('delete from contacts where tenant_id = $1 and id = $2', [tenantId, id]);
}

export async function insertTombstone(db: Queryable, tenantId: string, id: string): Promise<void> {
  await db.query(
    'insert into contact_tombstones (id, tenant_id) values ($1, $2) on conflict (id) do nothing',
    [id, tenantId],
  );
}

export async function hasTombstone(db: Queryable, tenantId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'select 1 from contact_tombstones where tenant_id = $1 and id = $2',
    [tenantId, id],
  );
  return rowCount === 1;
}

/**
 * Batch lookups for identity resolution: each one index-backed, `= any($2)`, and named, to be
 * planned once per connection on the identity lookups' pool (identity-lookup-pool.ts).
 */
export async function contactIdsByIds(
  db: Queryable,
  tenantId: string,
  ids: string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await db.query<{ id: string }>({
    name: 'contacts.identity_ids.1',
    text: 'select id from contacts where tenant_id = $1 and id = any($2::uuid[])',
    values: [tenantId, ids],
  });
  return new Set(rows.map((r) => r.id));
}

export async function contactIdsByExternalIds(
  db: Queryable,
  tenantId: string,
  externalIds: string[],
): Promise<Map<string, string>> {
  if (externalIds.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; external_id: string }>({
    name: 'contacts.identity_external_ids.1',
    text: 'select id, external_id from contacts where tenant_id = $1 and external_id = any($2::text[])',
    values: [tenantId, externalIds],
  });
  return new Map(rows.map((r) => [r.external_id, r.id]));
}

export async function contactIdsByEmails(
  db: Queryable,
  tenantId: string,
  emails: string[],
): Promise<Map<string, string>> {
  if (emails.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; email_key: string }>({
    name: 'contacts.identity_emails.1',
    text: 'select id, email_key from contacts where tenant_id = $1 and email_key = any($2::text[])',
    values: [tenantId, emails.map(emailKey)],
  });
  return new Map(rows.map((r) => [r.email_key, r.id]));
}
