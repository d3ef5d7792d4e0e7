create table tenants (
  id uuid primary key,
  name text not null,
  created_at timestamptz not null default now()
);

create table api_keys (
  client_id text primary key,
  tenant_id uuid not null references tenants (id),
  kind text not null check (kind in ('secret', 'publishable')),
  -- argon2id PHC string; a publishable key has no secret.
  secret_hash text,
  scopes text[] not null,
  name text,
  created_at timestamptz not null default now(),
  revoked_at timestamptz,
  constraint api_keys_secret_matches_kind check ((kind = 'secret') = (secret_hash is not null))
);

create index api_keys_tenant_id_idx on api_keys (tenant_id);
