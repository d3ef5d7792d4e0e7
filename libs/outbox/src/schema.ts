/**
 * The outbox table. Each service owns its schema: paste this into one of its own migrations
 * (the library never runs DDL). Every replica of the service, and its relay, use this one table.
 *
 * - `value` is the message's JSON text exactly as it goes to Kafka (`text`, not `jsonb`: jsonb
 *   would reorder the object's keys, reformat it, and reject a `\u0000` escape that JSON allows),
 *   or null for a tombstone, the delete marker of a log-compacted topic.
 * - `subject_id` says whom the message is about (a Contact), so that an erasure can delete the
 *   pending messages that hold that person's data (`deletePendingFor`).
 * - Rows are deleted once published, never marked: an outbox that is caught up holds nothing.
 */
export const OUTBOX_TABLE_SQL = `create table outbox (
  id bigint generated always as identity primary key,
  topic text not null,
  key text not null,
  value text,                -- JSON text as sent; null = a Kafka tombstone (compacted topics)
  headers jsonb not null default '{}'::jsonb,
  subject_id uuid,           -- whom the message is about, so an erasure can delete it unsent
  created_at timestamptz not null default now()
);
create index outbox_subject_id_idx on outbox (subject_id) where subject_id is not null;
`;

/**
 * The relays' heartbeats, beside the outbox in the same schema (paste it too): each relay
 * writes its row every second or so and shares the shards with the others that wrote theirs
 * within the lease (shards.ts). `shards` is what the relay publishes, for whoever looks.
 */
export const OUTBOX_RELAYS_TABLE_SQL = `create table outbox_relays (
  outbox text not null,
  relay_id text not null,
  shard_count integer not null,
  shards integer[] not null default '{}',
  seen_at timestamptz not null,
  primary key (outbox, relay_id)
);
`;
