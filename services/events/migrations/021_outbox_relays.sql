-- The outbox relays' heartbeats: every relay replica writes its row about once a second, and the
-- live ones share the outbox's shards between them (@herald/outbox, OUTBOX_RELAYS_TABLE_SQL).
create table outbox_relays (
  outbox text not null,
  relay_id text not null,
  shard_count integer not null,
  shards integer[] not null default '{}',
  seen_at timestamptz not null,
  primary key (outbox, relay_id)
);
