-- A Tenant's deletion (docs/operations.md#offboarding-a-tenant). The row stays, marked, while the
-- other services delete its data: the mark is what a retry or another replica resumes from, and
-- what refuses its token exchanges and operator routes meanwhile.
alter table tenants
  add column deletion_requested_at timestamptz,
  -- The auth replica running the deletion holds it until then (renewed as it goes); an expired
  -- lease lets another replica take the deletion over.
  add column deletion_lease_until timestamptz;

-- The sweep that resumes deletions reads only the few marked rows.
create index tenants_deletion_requested_idx on tenants (deletion_requested_at)
  where deletion_requested_at is not null;

-- The ClientIDs of a deleted Tenant's keys, with when they were revoked, no Tenant id: the
-- revocation list keeps naming them until every token issued for them has expired (then they
-- are pruned), so that deleting the keys brings no token back to life.
create table deleted_key_revocations (
  client_id text primary key,
  revoked_at timestamptz not null
);

create index deleted_key_revocations_revoked_at on deleted_key_revocations (revoked_at);
