import type { PoolClient } from '@herald/db';
import { hashDedupKey } from '../domain/dedup-key.js';

export interface ClaimRequest {
  dedupKey: string;
  eventId: string;
}

/**
 * Claims dedupKeys for the Events about to be recorded, in the recording's transaction
 * (60 s per Tenant; a failed request claims nothing). A key is ours when nobody holds it or its claim is older than the window;
 * returns ours (by dedupKey), each with how long its window still runs (ms). The table holds the
 * key's hash only (hashDedupKey), never the caller's text.
 *
 * A claim another transaction has not committed yet makes this wait on the unique index, then
 * find it (a duplicate) or, if that one rolled back, take the key: two concurrent requests with
 * one key record it once. A request that fails rolls its claims back with it. The keys are
 * claimed in one sorted order so that two batches sharing several keys never deadlock.
 */
export async function claimDedupKeys(
  client: PoolClient,
  tenantId: string,
  claims: readonly ClaimRequest[],
  windowMs: number,
): Promise<Map<string, number>> {
  if (claims.length === 0) return new Map();
  const hashed = claims.map((c) => ({ ...c, hash: hashDedupKey(c.dedupKey) }));
  const byHash = new Map(hashed.map((c) => [c.hash, c.dedupKey]));
  const sorted = hashed.sort((a, b) => (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0));
  const { rows } = await client.query<{ dedup_key: string; remaining_ms: number }>(
    `insert into dedup_claims (tenant_id, dedup_key, event_id)
     select $1, c.dedup_key, c.event_id from unnest($2::text[], $3::uuid[]) as c(dedup_key, event_id)
     on conflict (tenant_id, dedup_key) do update
       set event_id = excluded.event_id, claimed_at = now()
       where dedup_claims.claimed_at < now() - make_interval(secs => $4)
     returning dedup_key,
       ($4 * 1000 - extract(epoch from clock_timestamp() - claimed_at) * 1000)::float8 as remaining_ms`,
    [tenantId, sorted.map((c) => c.hash), sorted.map((c) => c.eventId), windowMs / 1000],
  );
  return new Map(rows.map((r) => [byHash.get(r.dedup_key)!, r.remaining_ms]));
}
