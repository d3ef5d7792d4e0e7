-- migrate: no-transaction
-- The partitioned table's primary key must hold its partition column: (id, received_at). Built
-- here without blocking recording; 012 makes it the table's primary key. A build that failed
-- halfway leaves an invalid index that `if not exists` keeps: 012 then stops and says so.
create unique index concurrently if not exists events_id_received_at_key
  on events (id, received_at);
