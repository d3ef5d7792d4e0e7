-- How long the events service keeps a Tenant's Events, in days; null: the installation's
-- default (EVENT_RETENTION_DAYS_DEFAULT), which may change later. The operator API enforces the
-- bounds (1 to 3650); the check only keeps a nonsense value out.
alter table tenants
  add column event_retention_days integer,
  add constraint tenants_event_retention_days_positive check (event_retention_days >= 1);
