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

interface UpsertRow {
  o_status: UpsertStatus;
  o_id: string;
  o_external_id: string | null;
  o_email: string;
  o_name: string | null;
  o_phone: string | null;
  o_time_zone: string | null;
  o_created_at: Date;
  o_updated_at: Date;
}

// A named statement: each connection parses and plans the call once, then only binds it.
const UPSERT_STATEMENT = {
  name: 'contacts.upsert_contact.1',
  text: `select * from upsert_contact($1::uuid, $2::boolean, $3::text, $4::text, $5::text,
    $6::text, $7::boolean, $8::text, $9::boolean, $10::text, $11::boolean, $12::uuid, $13::uuid,
    $14::text, $15::jsonb)`,
};

/**
 * One upsert in one round trip: the `upsert_contact` function (migrations/003) locks, decides,
 * writes the row with its outbox message, and answers what it did. `conflict` writes nothing,
 * and neither does `unchanged`. Every lookup in it names the Tenant.
 */
export async function upsertContact(
  db: Queryable,
  upsert: ContactUpsert,
): Promise<
  { status: 'conflict' } | { status: Exclude<UpsertStatus, 'conflict'>; contact: Contact }
> {
  const optional = (value: string | null | undefined) => [value ?? null, value !== undefined];
  const { rows } = await db.query<UpsertRow>({
    ...UPSERT_STATEMENT,
    values: [
      upsert.tenantId,
      upsert.externalId !== null,
      upsert.externalId,
      upsert.email,
      emailKey(upsert.email),
      ...optional(upsert.name),
      ...optional(upsert.phone),
      ...optional(upsert.timeZone),
      upsert.newId,
      upsert.messageId,
      upsert.topic,
      JSON.stringify(upsert.headers),
    ],
  });
  const row = rows[0]!;
  if (row.o_status === 'conflict') return { status: 'conflict' };
  return {
    status: row.o_status,
    contact: {
      id: row.o_id,
      tenantId: upsert.tenantId,
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

/** Batch lookups for identity resolution: each one index-backed, `= any($2)`. */
export async function contactIdsByIds(
  db: Queryable,
  tenantId: string,
  ids: string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await db.query<{ id: string }>(
    'select id from contacts where tenant_id = $1 and id = any($2::uuid[])',
    [tenantId, ids],
  );
  return new Set(rows.map((r) => r.id));
}

export async function contactIdsByExternalIds(
  db: Queryable,
  tenantId: string,
  externalIds: string[],
): Promise<Map<string, string>> {
  if (externalIds.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; external_id: string }>(
    'select id, external_id from contacts where tenant_id = $1 and external_id = any($2::text[])',
    [tenantId, externalIds],
  );
  return new Map(rows.map((r) => [r.external_id, r.id]));
}

export async function contactIdsByEmails(
  db: Queryable,
  tenantId: string,
  emails: string[],
): Promise<Map<string, string>> {
  if (emails.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; email_key: string }>(
    'select id, email_key from contacts where tenant_id = $1 and email_key = any($2::text[])',
    [tenantId, emails.map(emailKey)],
  );
  return new Map(rows.map((r) => [r.email_key, r.id]));
}
