-- Each Tenant's subscription state, the source of truth (Redis only mirrors it). A Tenant
-- without a row has never had a billing event: active, no failures, version 0.
create table subscriptions (
  tenant_id uuid primary key,
  state text not null check (state in ('active', 'suspended')),
  consecutive_failures integer not null check (consecutive_failures >= 0),
  -- +1 on every change; orders the Redis mirror and the Kafka messages.
  version bigint not null check (version >= 1),
  updated_at timestamptz not null default now(),
  -- The highest version known to be in Redis; the sync loop rewrites every row behind it.
  redis_synced_version bigint not null default 0
);

-- The sync loop's one question, "which rows is Redis behind on", without a full scan.
create index subscriptions_redis_behind_idx on subscriptions (tenant_id)
  where redis_synced_version < version;
