import type { Queryable } from '@herald/db';

export type SubscriptionStateName = 'active' | 'suspended';

/** A Tenant's subscription as stored. */
export interface SubscriptionRow {
  tenantId: string;
  state: SubscriptionStateName;
  consecutiveFailures: number;
  /** +1 on every change; 0 for a Tenant that never had a row. */
  version: number;
  updatedAt: Date | null;
}

interface DbRow {
  tenant_id: string;
  state: SubscriptionStateName;
  consecutive_failures: number;
  version: string;
  updated_at: Date;
}

const COLUMNS = 'tenant_id, state, consecutive_failures, version, updated_at';

function toRow(row: DbRow): SubscriptionRow {
  return {
    tenantId: row.tenant_id,
    state: row.state,
    consecutiveFailures: row.consecutive_failures,
    // bigint arrives as text; a counter of changes stays far below 2^53.
    version: Number(row.version),
    updatedAt: row.updated_at,
  };
}

/** What a Tenant without a row has: it never had a billing event. */
export function neverBilled(tenantId: string): SubscriptionRow {
  return { tenantId, state: 'active', consecutiveFailures: 0, version: 0, updatedAt: null };
}

/** One primary-key read. */
export async function findSubscription(
  db: Queryable,
  tenantId: string,
): Promise<SubscriptionRow | undefined> {
  const { rows } = await db.query<DbRow>(
    `select ${COLUMNS} from subscriptions where tenant_id = $1`,
    [tenantId],
  );
  return rows[0] && toRow(rows[0]);
}

/**
 * Counts one more failed payment in one statement: the upsert takes the row lock, so parallel
 * calls count exactly. Reaching `suspendAfter` suspends; a suspended Tenant stays suspended
 * (and keeps counting) until its payment details are updated, whatever the setting says later.
 */
export async function addPaymentFailure(
  db: Queryable,
  tenantId: string,
  suspendAfter: number,
): Promise<SubscriptionRow> {
  const { rows } = await db.query<DbRow>(
    `insert into subscriptions as s (tenant_id, state, consecutive_failures, version)
     values ($1, case when 1 >= $2 then 'suspended' else 'active' end, 1, 1)
     on conflict (tenant_id) do update set
       consecutive_failures = s.consecutive_failures + 1,
       state = case when s.consecutive_failures + 1 >= $2 then 'suspended' else s.state end,
       version = s.version + 1,
       updated_at = now()
     returning ${COLUMNS}`,
    [tenantId, suspendAfter],
  );
  return toRow(rows[0]!);
}

/**
 * Active again with no failures. Changes (and returns) the row only when it differs, so a
 * repeat changes nothing and announces nothing; undefined means nothing changed.
 */
export async function resetToActive(
  db: Queryable,
  tenantId: string,
): Promise<SubscriptionRow | undefined> {
  const { rows } = await db.query<DbRow>(
    `update subscriptions set state = 'active', consecutive_failures = 0,
       version = version + 1, updated_at = now()
     where tenant_id = $1 and (state <> 'active' or consecutive_failures <> 0)
     returning ${COLUMNS}`,
    [tenantId],
  );
  return rows[0] && toRow(rows[0]);
}

/**
 * Rows whose newest version Redis may not hold, suspended ones first: a Redis restored with old
 * data lets a suspended Tenant write until its row comes round.
 */
export async function findBehindRedis(db: Queryable, limit: number): Promise<SubscriptionRow[]> {
  const { rows } = await db.query<DbRow>(
    `select ${COLUMNS} from subscriptions where redis_synced_version < version
     order by state = 'suspended' desc, tenant_id limit $1`,
    [limit],
  );
  return rows.map(toRow);
}

/** Records that Redis holds these versions (never moves a row's mark backwards). */
export async function markSyncedToRedis(
  db: Queryable,
  synced: readonly { tenantId: string; version: number }[],
): Promise<void> {
  if (synced.length === 0) return;
  await db.query(
    `update subscriptions s set redis_synced_version = greatest(s.redis_synced_version, v.version)
     from unnest($1::uuid[], $2::bigint[]) as v(tenant_id, version)
     where s.tenant_id = v.tenant_id`,
    [synced.map((r) => r.tenantId), synced.map((r) => r.version)],
  );
}

/** After Redis may have lost or rolled back data: every row is to be written again. */
export async function markAllBehindRedis(db: Queryable): Promise<number> {
  const result = await db.query(
    'update subscriptions set redis_synced_version = 0 where redis_synced_version <> 0',
  );
  return result.rowCount ?? 0;
}
