-- migrate: no-transaction
-- migrate: each partition of events
create index concurrently if not exists {partition}_tenant_received
  on {partition} (tenant_id, received_at);
