-- The swap (see 009). One transaction, under the runner's lock_timeout: it waits for the
-- batches in flight, and recording waits for it, a few milliseconds of catalog changes: the
-- bound and the key were checked and built by 010 and 011, so nothing scans the table.
--   * the table becomes `events_before_partitions`, its primary key (id, received_at);
--   * the partitioned `events` takes its place, the old table its partition of every time before
--     the bound, and `events_default` catches an Event that no partition covers, so that a write
--     never fails for want of one (partition upkeep moves such rows into their own partition);
--   * the partitions from the bound on are created ahead by the upkeep (src/partitions/).
-- The SQL functions insert into `events` by name and are planned again against the new table.
do $$
declare
  bound timestamptz;
begin
  if exists (select 1 from pg_index
             where indexrelid = to_regclass('events_id_received_at_key') and not indisvalid) then
    raise exception 'index events_id_received_at_key is invalid (its concurrent build failed): '
      'drop it, and delete 011_events_id_received_at_key.sql from schema_migrations, '
      'then run the migrations again';
  end if;
  select (regexp_match(pg_get_constraintdef(oid), '''([^'']+)'''))[1]::timestamptz into bound
  from pg_constraint
  where conrelid = 'events'::regclass and conname = 'events_before_partitions_bound';

  lock table events in access exclusive mode;
  alter table events rename to events_before_partitions;
  alter table events_before_partitions drop constraint events_pkey;
  alter table events_before_partitions
    add constraint events_before_partitions_pkey primary key using index events_id_received_at_key;
  alter index events_tenant_contact_idx rename to events_before_partitions_tenant_contact_idx;

  create table events (
    id uuid not null,
    tenant_id uuid not null,
    -- The acting Contact; null only for an organization Event without one.
    contact_id uuid,
    organization_external_id text,
    event_name text not null,
    occurred_at timestamptz not null,
    received_at timestamptz not null default now(),
    dedup_key text,
    -- Text, not jsonb: kept exactly as the caller sent it (key order, numbers).
    properties text,
    primary key (id, received_at)
  ) partition by range (received_at);
  create index events_tenant_contact_idx on events (tenant_id, contact_id, received_at, id)
    where contact_id is not null;

  -- The indexes of the old table match the new ones: attached, not built again.
  execute format(
    'alter table events attach partition events_before_partitions for values from (minvalue) to (%L)',
    bound);
  alter table events_before_partitions drop constraint events_before_partitions_bound;
  create table events_default partition of events default;
end
$$;
