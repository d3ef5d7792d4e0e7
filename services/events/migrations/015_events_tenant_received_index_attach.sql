-- Attaches 014's indexes to 013's; a partition created since came with its own, attached already.
-- Once every partition's is attached, the parent's index is valid.
do $$
declare
  p record;
begin
  for p in select c.oid, c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid
           where i.inhparent = 'events'::regclass loop
    if not exists (select 1 from pg_inherits ii join pg_index x on x.indexrelid = ii.inhrelid
                   where ii.inhparent = 'events_tenant_received_idx'::regclass
                     and x.indrelid = p.oid) then
      execute format('alter index events_tenant_received_idx attach partition %I',
                     p.relname || '_tenant_received');
    end if;
  end loop;
end
$$;
