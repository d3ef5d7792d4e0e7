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

export interface ContactFields {
  email: string;
  name: string | null;
  phone: string | null;
  timeZone: string | null;
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

export const findContactByEmail = (
  db: Queryable,
  tenantId: string,
  email: string,
  opts: { forUpdate?: boolean } = {},
) =>
  one(
    db,
    `select ${COLUMNS} from contacts where tenant_id = $1 and email_key = $2${opts.forUpdate ? ' for update' : ''}`,
    [tenantId, emailKey(email)],
  );

/**
 * The Contacts an upsert by externalId touches (the one with the externalId, the one with the
 * email), locked in id order: two upserts that touch the same two Contacts lock them in the
 * same order and so never deadlock. A row changed while waiting for its lock is re-checked.
 */
export async function lockContactsForUpsert(
  db: Queryable,
  tenantId: string,
  externalId: string,
  email: string,
): Promise<Contact[]> {
  const { rows } = await db.query<ContactRow>(
    `select ${COLUMNS} from contacts
     where tenant_id = $1 and (external_id = $2 or email_key = $3)
     order by id for update`,
    [tenantId, externalId, emailKey(email)],
  );
  return rows.map(toContact);
}

export async function insertContact(
  db: Queryable,
  contact: { id: string; tenantId: string; externalId: string | null } & ContactFields,
): Promise<Contact> {
  const { rows } = await db.query<ContactRow>(
    `insert into contacts (id, tenant_id, external_id, email, email_key, name, phone, time_zone)
     values ($1, $2, $3, $4, $5, $6, $7, $8) returning ${COLUMNS}`,
    [
      contact.id,
      contact.tenantId,
      contact.externalId,
      contact.email,
      emailKey(contact.email),
      contact.name,
      contact.phone,
      contact.timeZone,
    ],
  );
  return toContact(rows[0]!);
}

/** The updated Contact, or null when the Tenant has no Contact with this id. */
export const updateContact = (
  db: Queryable,
  tenantId: string,
  id: string,
  fields: ContactFields & { externalId: string | null },
) =>
  one(
    db,
    `update contacts set external_id = $3, email = $4, email_key = $5, name = $6, phone = $7,
       time_zone = $8, updated_at = now()
     where tenant_id = $1 and id = $2 returning ${COLUMNS}`,
    [
      tenantId,
      id,
      fields.externalId,
      fields.email,
      emailKey(fields.email),
      fields.name,
      fields.phone,
      fields.timeZone,
    ],
  );

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
