-- migrate: no-transaction
-- A Tenant's deletion removes its tombstones in batches by tenant_id (src/data/tenant-data.ts):
-- without this index every batch would read the whole table.
create index concurrently if not exists contact_tombstones_tenant_id_idx on contact_tombstones (tenant_id);
