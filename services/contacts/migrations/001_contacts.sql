create table contacts (
  id uuid primary key,
  tenant_id uuid not null,
  external_id text,
  -- As the caller last wrote it; matching uses email_key (decisions B.1: case-insensitive).
  email text not null,
  email_key text not null,
  name text,
  phone text,
  time_zone text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create unique index contacts_tenant_external_id_key on contacts (tenant_id, external_id)
  where external_id is not null;
create unique index contacts_tenant_email_key on contacts (tenant_id, email_key);

-- An erased Contact leaves only its bare id (decisions H.2), so a by-id erase retry answers 204.
create table contact_tombstones (
  id uuid primary key,
  tenant_id uuid not null,
  erased_at timestamptz not null default now()
);

create table organizations (
  tenant_id uuid not null,
  external_id text not null,
  name text,
  created_at timestamptz not null default now(),
  primary key (tenant_id, external_id)
);
