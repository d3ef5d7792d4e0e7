-- The revocation list every service polls (decisions D.6): keys revoked recently enough that
-- tokens issued for them may still be unexpired. Partial: live keys are not in the index.
create index api_keys_revoked_at on api_keys (revoked_at) where revoked_at is not null;
