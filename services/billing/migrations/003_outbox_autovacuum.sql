-- Every outbox row is deleted once published, so the table's dead rows grow with the rate of
-- subscription changes. The relay vacuums it itself after every 20,000 rows it deleted
-- (@herald/outbox); these settings make autovacuum a close second for when it cannot (its user
-- owns neither the table nor the database). The reasons for each value are in the events
-- service's 020_side_tables_autovacuum.sql, which sets the same on its outbox: a fixed count of
-- 1,000 dead rows rather than a share of a table that swings between empty and a backlog, and no
-- cost delay, since a pass over a table kept small is short.
alter table outbox set (
  autovacuum_vacuum_scale_factor = 0,
  autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_cost_delay = 0
);
