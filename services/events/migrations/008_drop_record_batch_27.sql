-- The record_events_batch of 004 and 005 (27 arguments: it took each claim's hash twice) has had
-- no caller since 006 added the one every release calls now, beside it so that replicas of the
-- release before could go on during a rolling upgrade. Those replicas are gone by the time this
-- runs: a release runs its migrations only after the previous one (which never called it) ran.
drop function if exists record_events_batch(
  float8, boolean, text, int4[], int4[], uuid[], jsonb[], int4[], int4[], int4[], int4[],
  bigint[], uuid[], boolean[], text[], uuid[], uuid[], uuid[], text[], text[], timestamptz[],
  text[], text[], text[], text[], text[], text[]
);
