-- The retention sweep's index: a Tenant's Events by recording time, organization Events (no
-- Contact) included, which events_tenant_contact_idx leaves out. Three steps, as for any index of
-- the partitioned table (docs/development.md, "Schema changes on a live system"): the parent's
-- index alone here (instant, not yet valid), 014 builds each partition's concurrently, 015
-- attaches them.
create index if not exists events_tenant_received_idx on only events (tenant_id, received_at);
