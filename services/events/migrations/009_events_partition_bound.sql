-- `events` becomes a table partitioned by its recording time, received_at (docs/events.md,
-- "Partitions"). On a populated table that is four migrations, so that none holds a lock that
-- stops recording for more than a moment:
--   009 (this one) bounds the Events recorded from now on below a UTC midnight eight days away,
--       the start of the first partition: NOT VALID, so only new rows are checked, no scan;
--   010 checks the bound on the rows already there, a scan that lets recording go on;
--   011 builds the primary key of the partitioned table, (id, received_at), concurrently;
--   012 swaps in the partitioned table in one short transaction, the old table becoming its
--       partition of everything before that midnight: no row is copied.
-- The eight days are the margin for 010 and 011 on a large table: an Event recorded past the
-- bound before 012 ran would be refused. Until 012 runs nothing else changes.
do $$
declare
  first_partition_start timestamptz :=
    (date_trunc('day', now() at time zone 'UTC') + interval '8 days') at time zone 'UTC';
begin
  execute format(
    'alter table events add constraint events_before_partitions_bound'
    ' check (received_at < %L) not valid',
    first_partition_start);
end
$$;
