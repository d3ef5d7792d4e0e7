-- What a publishable key may do beyond recording Events by contactId. Existing keys get the
-- strictest rules: no lookups by email or externalId, any Origin.
alter table api_keys
  add column identifier_lookup boolean not null default false,
  add column allowed_origins text[] not null default '{}',
  add constraint api_keys_rules_publishable_only
    check (kind = 'publishable' or (not identifier_lookup and allowed_origins = '{}'));
