-- The contacts service's Contact identities as its Kafka topics announce them (the relay
-- process consumes herald.contacts.changed and herald.contacts.erased), so recording can resolve
-- identities without calling it. Only facts that never change are answered from here: a Contact
-- id exists in its Tenant, and an externalId, once a Contact has one, names that Contact until it
-- is erased. No email: emails move between Contacts, so by-email is always asked of contacts.
create table contact_identities (
  tenant_id uuid not null,
  contact_id uuid not null,
  -- SHA-256 of the externalId's UTF-8, never the value: every events database fed by the topics
  -- holds these rows, and only the one the erasure calls drops them at once.
  external_id_sha256 bytea,
  -- The newest snapshot's updatedAt applied: an older snapshot (a replay) changes nothing.
  updated_at timestamptz,
  -- An erasure is final: the bare ids stay as a tombstone, so no replayed snapshot brings the
  -- Contact back.
  erased boolean not null default false,
  primary key (tenant_id, contact_id)
);

-- Not unique: after an erasure its externalId may name a new Contact, whose snapshot can arrive
-- before the old one's erasure (another partition). Two live rows are then not answered.
create index contact_identities_external_id_idx on contact_identities (tenant_id, external_id_sha256)
  where external_id_sha256 is not null and not erased;

-- The consumer group that fills the table: one per database, so a new (or rebuilt) database
-- reads the topics from their beginning, while its replicas and restarts share the group.
create table contact_identities_consumer (
  singleton boolean primary key default true check (singleton),
  group_id text not null
);

insert into contact_identities_consumer (group_id)
  values ('herald-events-contact-identities-' || gen_random_uuid());
