-- upsert_contact over arrays: several upserts in one call and one transaction (group commit,
-- domain/contacts.ts). Each runs the one-upsert upsert_contact (003) in a block of its own, so
-- one that fails leaves the others' writes and answers its SQLSTATE instead ('failed', o_code,
-- o_message); Node then runs it again or answers its error. Arrays hold one element per upsert,
-- in the one-upsert function's argument order.
--
-- Locks, before any upsert runs, so that two batches never each hold a row the other needs:
-- - p_lock_keys: 64-bit keys of every identity the upserts name (Tenant and externalId, Tenant
--   and email key), distinct and sorted, each locked in that order. Two batches naming one
--   identity wait for each other here; a Contact one of them creates has only identities its
--   upsert names.
-- - then every Contact an upsert of the batch can touch (found by its externalId or its email
--   key, as upsert_contact finds them), by id, in id order. Any batch touching a Contact holds
--   its lock first, so batches never wait for each other's row locks, and a batch that waits
--   holds no Contact meanwhile. (A Contact another batch gives one of our identities meanwhile
--   was named by that batch too: we waited for it above, and the lookup sees its write.)
--
-- What aborts a transaction anyway (deadlock, serialization failure) or says the server is in
-- trouble is raised: nothing of the batch is written and Node runs it again, then each upsert
-- alone.
create function upsert_contact(
  p_lock_keys bigint[],
  p_topic text[],
  p_tenant uuid[],
  p_by_external_id boolean[],
  p_external_id text[],
  p_email text[],
  p_email_key text[],
  p_name text[],
  p_name_set boolean[],
  p_phone text[],
  p_phone_set boolean[],
  p_time_zone text[],
  p_time_zone_set boolean[],
  p_new_id uuid[],
  p_message_id uuid[],
  p_headers jsonb[]
) returns table (
  o_status text,
  o_id uuid,
  o_external_id text,
  o_email text,
  o_name text,
  o_phone text,
  o_time_zone text,
  o_created_at timestamptz,
  o_updated_at timestamptz,
  o_code text,
  o_message text
) language plpgsql as $$
declare
  contact record;
  failure_code text;
  failure_message text;
begin
  perform count(pg_advisory_xact_lock(k)) from unnest(p_lock_keys) as k;
  -- Advisory locks on the Contacts' ids, not row locks: upsert_contact locks its rows again in a
  -- subtransaction, and a row locked by both a transaction and its subtransaction costs a
  -- MultiXact per row. Two-key locks: a space of their own beside the identities' one-key locks.
  for contact in
    select distinct ('x' || substr(h, 1, 8))::bit(32)::int4 as hi,
                    ('x' || substr(h, 9, 8))::bit(32)::int4 as lo
    from (
      -- Two equality joins, each a nested loop over its unique index (an OR of the two would
      -- scan the table). An upsert by email has no externalId (null matches nothing).
      select replace(x.id::text, '-', '') as h
      from unnest(p_tenant, p_external_id) as u(tenant, external_id)
      join contacts x on x.tenant_id = u.tenant and x.external_id = u.external_id
      union
      select replace(x.id::text, '-', '')
      from unnest(p_tenant, p_email_key) as u(tenant, email_key)
      join contacts x on x.tenant_id = u.tenant and x.email_key = u.email_key
    ) as ids
    order by 1, 2
  loop
    perform pg_advisory_xact_lock(contact.hi, contact.lo);
  end loop;
  for r in 1 .. coalesce(array_length(p_tenant, 1), 0) loop
    o_code := null;
    o_message := null;
    begin
      select u.o_status, u.o_id, u.o_external_id, u.o_email, u.o_name, u.o_phone, u.o_time_zone,
             u.o_created_at, u.o_updated_at
        into o_status, o_id, o_external_id, o_email, o_name, o_phone, o_time_zone,
             o_created_at, o_updated_at
      from upsert_contact(p_tenant[r], p_by_external_id[r], p_external_id[r], p_email[r],
                          p_email_key[r], p_name[r], p_name_set[r], p_phone[r], p_phone_set[r],
                          p_time_zone[r], p_time_zone_set[r], p_new_id[r], p_message_id[r],
                          p_topic[r], p_headers[r]) as u;
    exception when others then
      get stacked diagnostics failure_code = returned_sqlstate,
                              failure_message = message_text;
      if failure_code in ('40001', '40P01') or left(failure_code, 2) in ('53', '57', '58', 'XX')
      then
        raise;
      end if;
      o_status := 'failed'; o_id := null; o_external_id := null; o_email := null;
      o_name := null; o_phone := null; o_time_zone := null; o_created_at := null;
      o_updated_at := null; o_code := failure_code; o_message := failure_message;
    end;
    return next;
  end loop;
end
$$;
