-- The transactional outbox of @herald/outbox: Kafka messages written in the same transaction
-- as the change they announce, published afterwards by the relay.
create table outbox (
  id bigint generated always as identity primary key,
  topic text not null,
  key text not null,
  value text,
  headers jsonb not null default '{}'::jsonb,
  subject_id uuid,
  created_at timestamptz not null default now()
);

create index outbox_subject_id_idx on outbox (subject_id) where subject_id is not null;
