-- The outbox and the dedup claims churn: every outbox row is deleted once published, every claim
-- once its window ends, thousands a second under load. The relay process vacuums both itself
-- after every 20,000 rows it deleted (@herald/outbox, recording/dedup-claims-upkeep.ts); these
-- settings make autovacuum a close second for when it cannot (its user owns neither the table
-- nor the database) and for the dead rows of erasures. Autovacuum visits a database at most once
-- a minute (autovacuum_naptime, server-wide); each visit should find these tables due and finish
-- quickly:
--   * autovacuum_vacuum_scale_factor = 0 with a threshold of 1,000 dead rows: the default, 50 rows
--     plus 20 % of the rows last counted, follows the table's size, and the outbox swings between
--     empty and a backlog (a Kafka outage) while the claims follow the rate of Events. A fixed
--     count makes any minute with real traffic due, and a vacuum of a small table costs little.
--   * autovacuum_vacuum_cost_delay = 0: with the default 2 ms pause every 200 cost units, one pass
--     over a 230 MB outbox took 20 s at 4,500 Events/s, while 90,000 more dead rows piled up;
--     these tables are kept small, so an unthrottled pass is short.
-- Left at their defaults, on purpose: fillfactor (the outbox is only inserted and deleted, and a
-- claim's one update, when an expired key is taken again, changes the indexed claimed_at, so it is
-- never a HOT update that free room in the page would help); the insert thresholds (rows here
-- die within seconds, so the dead-row trigger always comes first); vacuum_truncate (autovacuum
-- gives the file back once a backlog has drained; the relay's frequent vacuums skip that step).
alter table outbox set (
  autovacuum_vacuum_scale_factor = 0,
  autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_cost_delay = 0
);

alter table dedup_claims set (
  autovacuum_vacuum_scale_factor = 0,
  autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_cost_delay = 0
);
