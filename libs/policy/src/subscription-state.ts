import { defineScript, taggedKey, type Redis } from '@herald/redis';

// Subscriptions: the billing service owns each Tenant's subscription in PostgreSQL and mirrors it
// into Redis, where every service reads it on every write. The mirror can vanish (flush,
// restart): a missing key means "ask billing", never "active".

export type SubscriptionState = 'active' | 'suspended';

export interface SubscriptionSnapshot {
  state: SubscriptionState;
  consecutiveFailures: number;
  /** +1 on every change in PostgreSQL: the mirror never goes back to an older snapshot. */
  version: number;
}

/** `herald:{tenantId}:subscription`: tagged by Tenant, one slot per Tenant on a Cluster. */
export function subscriptionKey(tenantId: string): string {
  return taggedKey('herald', tenantId, 'subscription');
}

export function encodeSnapshot(s: SubscriptionSnapshot): string {
  return `${s.state}:${s.version}:${s.consecutiveFailures}`;
}

/** The mirrored value, or null when it is missing or not one this code wrote. */
export function decodeSnapshot(value: string | null | undefined): SubscriptionSnapshot | null {
  const match = /^(active|suspended):(\d+):(\d+)$/.exec(value ?? '');
  if (!match) return null;
  return {
    state: match[1] as SubscriptionState,
    version: Number(match[2]),
    consecutiveFailures: Number(match[3]),
  };
}

// Writers race (the change itself, the sync loop, a lazy refill from an older read): the
// version decides, atomically. No expiry: a mirror that vanished on its own would turn every
// write into a billing call, and a billing outage into lifted suspensions. A Redis restored
// with old data is rewritten by billing when it reconnects.
const STORE_IF_NOT_OLDER = defineScript(`
local current = redis.call('GET', KEYS[1])
if current then
  local version = tonumber(string.match(current, '^%a+:(%d+):'))
  if version and version > tonumber(ARGV[2]) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1])
return 1
`);

/**
 * Mirrors a snapshot unless Redis already holds a newer one. Resolves true when written,
 * false when a newer one was there; rejects when Redis fails.
 */
export async function storeSubscriptionState(
  redis: Redis,
  tenantId: string,
  snapshot: SubscriptionSnapshot,
): Promise<boolean> {
  const written = await STORE_IF_NOT_OLDER.run(
    redis,
    [subscriptionKey(tenantId)],
    [encodeSnapshot(snapshot), snapshot.version],
  );
  return written === 1;
}
