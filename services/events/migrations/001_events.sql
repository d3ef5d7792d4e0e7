create table events (
  id uuid primary key,
  tenant_id uuid not null,
  -- The acting Contact; null only for an organization Event without one.
  contact_id uuid,
  organization_external_id text,
  event_name text not null,
  occurred_at timestamptz not null,
  received_at timestamptz not null default now(),
  dedup_key text,
  -- Text, not jsonb: kept exactly as the caller sent it (key order, numbers).
  properties text
);

create index events_tenant_contact_idx on events (tenant_id, contact_id, received_at, id)
  where contact_id is not null;

-- Dedup (decisions C.2): the authoritative claim of a dedupKey, in the request's transaction.
-- A claim older than the window may be taken again; the relay process prunes old rows.
create table dedup_claims (
  tenant_id uuid not null,
  dedup_key text not null,
  event_id uuid not null,
  claimed_at timestamptz not null default now(),
  primary key (tenant_id, dedup_key)
);

create index dedup_claims_claimed_at_idx on dedup_claims (claimed_at);

-- The event-name catalog (spec 4.4 point 8).
create table event_names (
  tenant_id uuid not null,
  name text not null,
  first_seen_at timestamptz not null default now(),
  primary key (tenant_id, name)
);

-- Contacts erased here: an Event for one of them, accepted concurrently with the erasure, is
-- refused instead of outliving it. Bare ids only.
create table erased_contacts (
  tenant_id uuid not null,
  contact_id uuid not null,
  erased_at timestamptz not null default now(),
  primary key (tenant_id, contact_id)
);
