-- Checks 009's bound on the rows recorded before it: a scan under a lock that lets Events be
-- recorded and read meanwhile. 012 can then attach the table as a partition without a scan.
alter table events validate constraint events_before_partitions_bound;
