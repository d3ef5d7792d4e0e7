-- Every SQL function the contacts service calls, as a migrated database defines it now: the one
-- place to read them. Migrations add and never edit, so this file is what 003 and 004 add up to,
-- and test/component/sql-functions.test.ts fails when the two differ. A change to a function is a new
-- migration (create or replace, or a new overload while replicas of the previous release still
-- call the old one) and the same change here. data/contacts-repository.ts calls the array form,
-- which runs the one-upsert form for each upsert.

-- One upsert in one statement (domain/contacts.ts): it locks the Contacts the write touches,
-- decides, writes the row and its outbox message, and returns the outcome. As a single call it
-- is one round trip and one implicit transaction; the statements inside are planned once per
-- connection. A unique violation (two upserts creating one Contact at once) or a deadlock
-- aborts the whole call, which the caller runs again; it then finds the winner's row.
--
-- p_by_external_id: PUT /v1/contacts/{externalId} (true) or POST /v1/contacts by email (false).
--   PUT: the Contact with the externalId is updated; else an email-only Contact with the email
--   gains the externalId; else a Contact is created. The email held by another Contact (one
--   with another externalId, or any other when the externalId exists) is a conflict.
--   POST: the Contact with the email is updated and keeps its externalId; else one is created
--   without an externalId.
-- p_*_set: whether the body carried the optional field (null then clears it; left out keeps it).
-- p_email_key: the matching key of the email (lower-cased by the service, as every lookup is).
--
-- o_status: 'created', 'updated', 'unchanged' (nothing written, no message) or 'conflict'
-- (nothing written). The message is the contact.created/contact.updated value of
-- @herald/messages (contactChangedMessage), written here because only this call knows the row.
create or replace function upsert_contact(
  p_tenant uuid,
  p_by_external_id boolean,
  p_external_id text,
  p_email text,
  p_email_key text,
  p_name text,
  p_name_set boolean,
  p_phone text,
  p_phone_set boolean,
  p_time_zone text,
  p_time_zone_set boolean,
  p_new_id uuid,
  p_message_id uuid,
  p_topic text,
  p_headers jsonb
) returns table (
  o_status text,
  o_id uuid,
  o_external_id text,
  o_email text,
  o_name text,
  o_phone text,
  o_time_zone text,
  o_created_at timestamptz,
  o_updated_at timestamptz
) language plpgsql as $$
declare
  locked contacts%rowtype;
  by_external_id contacts%rowtype;
  by_email contacts%rowtype;
  target contacts%rowtype;
  written contacts%rowtype;
  next_external_id text;
begin
  if p_by_external_id then
    -- Both Contacts the write touches, locked in id order: two upserts that touch the same two
    -- lock them in the same order and so never deadlock.
    for locked in
      select * from contacts c
      where c.tenant_id = p_tenant and (c.external_id = p_external_id or c.email_key = p_email_key)
      order by c.id for update
    loop
      if locked.external_id = p_external_id then by_external_id := locked; end if;
      if locked.email_key = p_email_key then by_email := locked; end if;
    end loop;
    next_external_id := p_external_id;
    if by_external_id.id is not null then
      if by_email.id is not null and by_email.id <> by_external_id.id then
        o_status := 'conflict';
        return next;
        return;
      end if;
      target := by_external_id;
    elsif by_email.id is not null then
      if by_email.external_id is not null then
        o_status := 'conflict';
        return next;
        return;
      end if;
      target := by_email;
    end if;
  else
    select * into target from contacts c
    where c.tenant_id = p_tenant and c.email_key = p_email_key for update;
    next_external_id := target.external_id;
  end if;

  if target.id is null then
    insert into contacts (id, tenant_id, external_id, email, email_key, name, phone, time_zone)
    values (p_new_id, p_tenant, next_external_id, p_email, p_email_key,
      p_name, p_phone, p_time_zone)
    returning * into written;
    o_status := 'created';
  elsif target.email = p_email
    and target.external_id is not distinct from next_external_id
    and (not p_name_set or target.name is not distinct from p_name)
    and (not p_phone_set or target.phone is not distinct from p_phone)
    and (not p_time_zone_set or target.time_zone is not distinct from p_time_zone) then
    -- A repeated upsert changes nothing, updatedAt included, and announces nothing.
    written := target;
    o_status := 'unchanged';
  else
    update contacts c set
      external_id = next_external_id,
      email = p_email,
      email_key = p_email_key,
      name = case when p_name_set then p_name else c.name end,
      phone = case when p_phone_set then p_phone else c.phone end,
      time_zone = case when p_time_zone_set then p_time_zone else c.time_zone end,
      updated_at = now()
    where c.tenant_id = p_tenant and c.id = target.id
    returning * into written;
    o_status := 'updated';
  end if;

  if o_status <> 'unchanged' then
    -- Timestamps as JavaScript's Date#toISOString writes them (UTC, milliseconds); absent
    -- optional fields are left out of the snapshot, as the API leaves them out. json_strip_nulls
    -- drops those and writes the text compact, as JSON.stringify does.
    insert into outbox (topic, key, value, headers, subject_id)
    values (p_topic, written.id::text, json_strip_nulls(json_build_object(
        'version', 1,
        'type', 'contact.' || o_status,
        'messageId', p_message_id,
        'tenantId', p_tenant,
        'occurredAt', to_char(written.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'contact', json_build_object(
          'id', written.id,
          'externalId', written.external_id,
          'email', written.email,
          'name', written.name,
          'phone', written.phone,
          'timeZone', written.time_zone,
          'createdAt', to_char(written.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'updatedAt', to_char(written.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
        )
      ))::text, p_headers, written.id);
  end if;

  o_id := written.id;
  o_external_id := written.external_id;
  o_email := written.email;
  o_name := written.name;
  o_phone := written.phone;
  o_time_zone := written.time_zone;
  o_created_at := written.created_at;
  o_updated_at := written.updated_at;
  return next;
end
$$;

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
create or replace function upsert_contact(
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
