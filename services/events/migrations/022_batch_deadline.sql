-- A recording call that reaches the database after its deadline fails instead of recording. A
-- statement can be held up on its way (a proxy or connection pooler that buffers it through a
-- network partition) and arrive minutes after it was sent, when its requests were long since
-- answered 503 and resent, and after their dedup window: recorded then, an Event resent inside
-- its window would be stored twice. The caller passes its estimate of this server's clock plus a
-- few seconds; null skips the check. Class 08 (connection exception): the caller answers 503.
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
