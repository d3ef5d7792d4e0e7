-- Every SQL function the events service calls, as a migrated database defines it now: the one
-- place to read them. Migrations add and never edit, so a function's history is spread over
-- several of them (004 to 008); this file is what they add up to, and
-- test/component/sql-functions.test.ts fails when the two differ. A change to a function is a new
-- migration (create or replace, or a new overload while replicas of the previous release still
-- call the old one) and the same change here.
--
-- recording/data/record-batch.ts calls them. Recording in batches
-- (recording/recording-batcher.ts): the transactions of concurrent requests written by one call,
-- in one transaction. The arrays describe the requests in order: `r_*` one element per request,
-- the others flattened, each request's part as long as its `r_*` count says:
--   l_key          its Contacts' advisory lock keys (contactLockKey), sorted
--   c_contact      every Contact it names (duplicates skipped in Node included), `c_candidate`
--                  whether an Event to record names it
--   k_hash/k_event its dedup claims (SHA-256 hex of the key, Event id), sorted by hash
--   e_*            its Events to record; each outbox message's value is
--                  e_msg_head || receivedAt || e_msg_tail || e_properties || '}', since only
--                  this transaction knows receivedAt
-- p_key_hi/p_key_lo: one advisory lock per dedupKey of the whole batch (Tenant and hash), sorted.
-- Both answer one row per request, in order (o_status recorded, refused with o_erased, busy, or
-- failed with o_code and o_message; o_lost the ids of its Events whose dedup claim another
-- request holds), then one row 'done' with what is left of the claims' window.

-- record_events_batch: each request inside its own subtransaction, so that a request refused or
-- failing leaves its neighbours recorded. The fallback of record_events_batch_at_once.
create or replace function record_events_batch(
  p_window_secs float8,
  p_wait boolean,
  p_topic text,
  p_key_hi int4[],
  p_key_lo int4[],
  r_tenant uuid[],
  r_headers jsonb[],
  r_locks int4[],
  r_contacts int4[],
  r_claims int4[],
  r_events int4[],
  l_key bigint[],
  c_contact uuid[],
  c_candidate boolean[],
  k_hash text[],
  k_event uuid[],
  e_id uuid[],
  e_contact uuid[],
  e_org text[],
  e_name text[],
  e_occurred timestamptz[],
  e_dedup text[],
  e_properties text[],
  e_msg_key text[],
  e_msg_head text[],
  e_msg_tail text[]
) returns table (
  o_status text,
  o_erased uuid[],
  o_lost uuid[],
  o_code text,
  o_message text,
  o_received_at timestamptz,
  o_remaining_ms float8
) language plpgsql as $$
declare
  request_count int := coalesce(array_length(r_tenant, 1), 0);
  -- The messages' receivedAt as Node's Date#toISOString writes the stored received_at.
  received text := to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
  busy bigint[] := '{}';
  refuse boolean;
  recorded_names text[];
  name_tenants uuid[] := '{}';
  batch_names text[] := '{}';
  tenant uuid;
  failure_code text;
  failure_message text;
  ls int := 1; le int;
  cs int := 1; ce int;
  ks int := 1; ke int;
  es int := 1; ee int;
begin
  -- The erasure fence: each Contact's lock shared. Waiting for an erasure would hold up every
  -- request of the batch, so a batch only tries; a request whose lock is taken (an erasure holds
  -- it or waits for it) comes back 'busy' and Node runs it alone with p_wait, which waits.
  -- Either way the check below is its own statement, so its snapshot sees what the lock waited for.
  if p_wait then
    perform count(pg_advisory_xact_lock_shared(k)) from unnest(l_key) as k;
  else
    select coalesce(array_agg(d.k), '{}') into busy
    from (select distinct k from unnest(l_key) as k) as d
    where not pg_try_advisory_xact_lock_shared(d.k);
  end if;
  -- Requests of one batch claim their keys one after the other, not in one sorted order, so two
  -- batches could each hold a key the other waits for. Taking every key's lock first, in one
  -- order, makes the claims below wait only for batches that already hold all of theirs.
  perform count(pg_advisory_xact_lock(k.hi, k.lo)) from unnest(p_key_hi, p_key_lo) as k(hi, lo);

  for r in 1 .. request_count loop
    le := ls + r_locks[r] - 1;
    ce := cs + r_contacts[r] - 1;
    ke := ks + r_claims[r] - 1;
    ee := es + r_events[r] - 1;
    tenant := r_tenant[r];
    o_status := null; o_erased := null; o_lost := '{}'; o_code := null; o_message := null;
    o_received_at := null; o_remaining_ms := null;
    recorded_names := null;

    if cardinality(busy) > 0 and l_key[ls:le] && busy then
      o_status := 'busy';
    else
      begin
        refuse := false;
        if r_contacts[r] > 0 then
          select coalesce(array_agg(c.contact_id), '{}'), coalesce(bool_or(c.candidate), false)
            into o_erased, refuse
          from unnest(c_contact[cs:ce], c_candidate[cs:ce]) as c(contact_id, candidate)
          where exists (select 1 from erased_contacts x
                        where x.tenant_id = tenant and x.contact_id = c.contact_id);
        end if;
        if refuse then
          o_status := 'refused';
        else
          o_erased := null;
          if r_claims[r] > 0 then
            -- A key is ours when nobody holds it or its claim has expired (the dedup window): the
            -- claim then holds our Event's id. The Events whose claim is not ours are the lost.
            with claimed as (
              insert into dedup_claims (tenant_id, dedup_key, event_id)
              select tenant, c.dedup_key, c.event_id
              from unnest(k_hash[ks:ke], k_event[ks:ke]) as c(dedup_key, event_id)
              on conflict (tenant_id, dedup_key) do update
                set event_id = excluded.event_id, claimed_at = now()
                where dedup_claims.claimed_at < now() - make_interval(secs => p_window_secs)
              returning dedup_claims.event_id
            )
            select array(select unnest(k_event[ks:ke]) except all select event_id from claimed)
              into o_lost;
          end if;
          with e as (
            select *
            from unnest(e_id[es:ee], e_contact[es:ee], e_org[es:ee], e_name[es:ee],
                        e_occurred[es:ee], e_dedup[es:ee], e_properties[es:ee],
                        e_msg_key[es:ee], e_msg_head[es:ee], e_msg_tail[es:ee])
              with ordinality as e(id, contact_id, org, event_name, occurred_at, dedup_key,
                                   properties, msg_key, msg_head, msg_tail, ord)
            where not exists (select 1 from unnest(o_lost) as lost(id) where lost.id = e.id)
          ), inserted as (
            insert into events (id, tenant_id, contact_id, organization_external_id, event_name,
                                occurred_at, dedup_key, properties)
            select e.id, tenant, e.contact_id, e.org, e.event_name, e.occurred_at, e.dedup_key,
                   e.properties
            from e
          ), announced as (
            -- enqueue's rows; the identity values follow the Events' order.
            insert into outbox (topic, key, value, headers, subject_id)
            select p_topic, e.msg_key,
                   e.msg_head || received || e.msg_tail || coalesce(e.properties, 'null') || '}',
                   r_headers[r],
                   e.contact_id
            from e order by e.ord
          )
          select array_agg(distinct e.event_name) into recorded_names from e;
          o_status := 'recorded';
        end if;
      exception when others then
        get stacked diagnostics failure_code = returned_sqlstate,
                                failure_message = message_text;
        -- What aborts a transaction anyway, or says the server is in trouble, fails the batch:
        -- Node runs it again (deadlock, serialization failure) or answers as for one request.
        if failure_code in ('40001', '40P01') or left(failure_code, 2) in ('53', '57', '58', 'XX')
        then
          raise;
        end if;
        -- Variables keep what the block assigned; its writes were rolled back.
        o_status := 'failed'; o_erased := null; o_lost := '{}'; recorded_names := null;
        o_code := failure_code; o_message := failure_message;
      end;
      if o_status = 'recorded' and recorded_names is not null then
        name_tenants := name_tenants || array_fill(tenant, array[cardinality(recorded_names)]);
        batch_names := batch_names || recorded_names;
      end if;
    end if;
    o_received_at := now();
    return next;
    ls := le + 1; cs := ce + 1; ks := ke + 1; es := ee + 1;
  end loop;

  -- The catalog of every recorded request at once, in one order, so that two batches adding
  -- the same new names wait for each other instead of deadlocking.
  if cardinality(batch_names) > 0 then
    insert into event_names (tenant_id, name)
    select d.tenant_id, d.name
    from (select distinct t as tenant_id, n as name
          from unnest(name_tenants, batch_names) as x(t, n)) as d
    order by d.tenant_id, d.name collate "C"
    on conflict (tenant_id, name) do nothing;
  end if;

  o_status := 'done'; o_erased := null; o_lost := null; o_code := null; o_message := null;
  o_received_at := now();
  o_remaining_ms := p_window_secs * 1000 - extract(epoch from clock_timestamp() - now()) * 1000;
  return next;
end
$$;

-- The request (1-based) of each element of a batch's flattened arrays, from the per-request
-- counts: element `ord` belongs to request `r`.
create or replace function batch_element_requests(counts int4[]) returns table (ord bigint, r int)
language sql immutable parallel safe as $$
  select s.start + g, s.r::int
  from (select n.r, n.cnt, coalesce(sum(n.cnt) over (order by n.r), 0) - n.cnt as start
        from unnest(counts) with ordinality as n(cnt, r)) as s,
       generate_series(1, s.cnt) as g
$$;

-- record_events_batch_at_once: the same arguments and answer, for the whole batch at once: one
-- statement per table and no subtransaction per request. Any error fails the whole call and
-- nothing of it is written; the caller then runs the batch through record_events_batch.
create or replace function record_events_batch_at_once(
  p_window_secs float8,
  p_wait boolean,
  p_topic text,
  p_key_hi int4[],
  p_key_lo int4[],
  r_tenant uuid[],
  r_headers jsonb[],
  r_locks int4[],
  r_contacts int4[],
  r_claims int4[],
  r_events int4[],
  l_key bigint[],
  c_contact uuid[],
  c_candidate boolean[],
  k_hash text[],
  k_event uuid[],
  e_id uuid[],
  e_contact uuid[],
  e_org text[],
  e_name text[],
  e_occurred timestamptz[],
  e_dedup text[],
  e_properties text[],
  e_msg_key text[],
  e_msg_head text[],
  e_msg_tail text[]
) returns table (
  o_status text,
  o_erased uuid[],
  o_lost uuid[],
  o_code text,
  o_message text,
  o_received_at timestamptz,
  o_remaining_ms float8
) language plpgsql as $$
declare
  request_count int := coalesce(array_length(r_tenant, 1), 0);
  received text := to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
  busy bigint[] := '{}';
  -- Requests (1-based) that write nothing: a Contact's lock taken, or an erased Contact named.
  busy_requests int[] := '{}';
  refused_requests int[] := '{}';
  -- Every erased Contact a request names (not only those of its Events to record), by request.
  erased_requests int[] := '{}';
  erased_ids uuid[] := '{}';
  -- The Events whose claim is another's, by request.
  lost_requests int[] := '{}';
  lost_ids uuid[] := '{}';
begin
  -- The locks as in 006: each Contact's shared (tried, or waited for with p_wait), then every
  -- dedupKey's in one sorted order.
  if p_wait then
    perform count(pg_advisory_xact_lock_shared(k)) from unnest(l_key) as k;
  else
    select coalesce(array_agg(d.k), '{}') into busy
    from (select distinct k from unnest(l_key) as k) as d
    where not pg_try_advisory_xact_lock_shared(d.k);
  end if;
  perform count(pg_advisory_xact_lock(k.hi, k.lo)) from unnest(p_key_hi, p_key_lo) as k(hi, lo);

  if cardinality(busy) > 0 then
    select coalesce(array_agg(distinct o.r), '{}') into busy_requests
    from batch_element_requests(r_locks) as o
    join unnest(l_key) with ordinality as l(k, ord) using (ord)
    where l.k = any(busy);
  end if;

  -- Its own statement, after the locks: its snapshot sees the erasures the locks waited for.
  select coalesce(array_agg(o.r order by o.ord), '{}'),
         coalesce(array_agg(c.contact_id order by o.ord), '{}'),
         coalesce(array_agg(distinct o.r) filter (where c.candidate), '{}')
    into erased_requests, erased_ids, refused_requests
  from batch_element_requests(r_contacts) as o
  join unnest(c_contact, c_candidate) with ordinality as c(contact_id, candidate, ord) using (ord)
  where o.r <> all(busy_requests)
    and exists (select 1 from erased_contacts x
                where x.tenant_id = r_tenant[o.r] and x.contact_id = c.contact_id);

  with claims as (
    select o.r, o.ord, r_tenant[o.r] as tenant_id, k.dedup_key, k.event_id
    from batch_element_requests(r_claims) as o
    join unnest(k_hash, k_event) with ordinality as k(dedup_key, event_id, ord) using (ord)
    where o.r <> all(busy_requests) and o.r <> all(refused_requests)
  ), claimed as (
    -- A key is ours when nobody holds it or its claim has expired (the dedup window). Two
    -- requests of the batch with the same key: the first in the batch's order takes it, as
    -- when 006 ran them one after the other.
    insert into dedup_claims (tenant_id, dedup_key, event_id)
    select distinct on (c.tenant_id, c.dedup_key) c.tenant_id, c.dedup_key, c.event_id
    from claims as c
    order by c.tenant_id, c.dedup_key, c.ord
    on conflict (tenant_id, dedup_key) do update
      set event_id = excluded.event_id, claimed_at = now()
      where dedup_claims.claimed_at < now() - make_interval(secs => p_window_secs)
    returning dedup_claims.event_id
  ), lost as (
    select c.r, c.ord, c.event_id from claims as c
    where not exists (select 1 from claimed as w where w.event_id = c.event_id)
  ), e as (
    select o.r, e.*
    from batch_element_requests(r_events) as o
    join unnest(e_id, e_contact, e_org, e_name, e_occurred, e_dedup, e_properties,
                e_msg_key, e_msg_head, e_msg_tail)
      with ordinality as e(id, contact_id, org, event_name, occurred_at, dedup_key,
                           properties, msg_key, msg_head, msg_tail, ord) using (ord)
    where o.r <> all(busy_requests) and o.r <> all(refused_requests)
      and not exists (select 1 from lost where lost.event_id = e.id)
  ), inserted as (
    insert into events (id, tenant_id, contact_id, organization_external_id, event_name,
                        occurred_at, dedup_key, properties)
    select e.id, r_tenant[e.r], e.contact_id, e.org, e.event_name, e.occurred_at, e.dedup_key,
           e.properties
    from e
  ), announced as (
    -- enqueue's rows, in the requests' order and each request's Events' order.
    insert into outbox (topic, key, value, headers, subject_id)
    select p_topic, e.msg_key,
           e.msg_head || received || e.msg_tail || coalesce(e.properties, 'null') || '}',
           r_headers[e.r],
           e.contact_id
    from e order by e.ord
  ), cataloged as (
    -- In one order, so that two batches adding the same new names wait for each other
    -- instead of deadlocking.
    insert into event_names (tenant_id, name)
    select d.tenant_id, d.name
    from (select distinct r_tenant[e.r] as tenant_id, e.event_name as name from e) as d
    order by d.tenant_id, d.name collate "C"
    on conflict (tenant_id, name) do nothing
  )
  select coalesce(array_agg(lost.r order by lost.ord), '{}'),
         coalesce(array_agg(lost.event_id order by lost.ord), '{}')
    into lost_requests, lost_ids
  from lost;

  return query
  select case when q.r = any(busy_requests) then 'busy'
              when q.r = any(refused_requests) then 'refused'
              else 'recorded' end,
         case when q.r = any(refused_requests) then
           array(select erased_ids[i] from generate_subscripts(erased_requests, 1) as i
                 where erased_requests[i] = q.r)
         end,
         array(select lost_ids[i] from generate_subscripts(lost_requests, 1) as i
               where lost_requests[i] = q.r),
         null::text, null::text, now(), null::float8
  from generate_series(1, request_count) as q(r)
  order by q.r;

  o_status := 'done'; o_erased := null; o_lost := null; o_code := null; o_message := null;
  o_received_at := now();
  o_remaining_ms := p_window_secs * 1000 - extract(epoch from clock_timestamp() - now()) * 1000;
  return next;
end
$$;

-- batch_deadline (migration 022): raises 08000 when the call reaches the database after
-- p_not_after; record-batch.ts makes both batch calls depend on it (see BATCH_STATEMENTS).
create or replace function batch_deadline(p_not_after timestamptz) returns float8
language plpgsql volatile as $$
begin
  if p_not_after is not null and clock_timestamp() > p_not_after then
    raise exception 'the recording call reached the database % after its deadline',
      clock_timestamp() - p_not_after
      using errcode = '08000';
  end if;
  return 0;
end
$$;
