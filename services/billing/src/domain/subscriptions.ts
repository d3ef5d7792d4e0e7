import type { TenantDirectory } from '@herald/auth';
import { withTransaction, type Pool, type Queryable } from '@herald/db';
import { errors } from '@herald/errors';
import { TOPICS, type SubscriptionChangedMessage } from '@herald/messages';
import { enqueue } from '@herald/outbox';
import {
  addPaymentFailure,
  findSubscription,
  neverBilled,
  resetToActive,
  type SubscriptionRow,
} from '../data/subscriptions-repository.js';
import type { SubscriptionMirror } from './redis-mirror.js';

export interface BillingDeps {
  pool: Pool;
  tenantExists: TenantDirectory;
  mirror: SubscriptionMirror;
  /** Consecutive failed payments that suspend a Tenant (3 by default). */
  suspendAfterFailures: number;
}

/** What the operator API shows of a subscription. */
export type SubscriptionStatus = Pick<SubscriptionRow, 'state' | 'consecutiveFailures'>;

/** A Tenant's subscription now: its row, or the never-billed default. */
export async function subscriptionOf(
  deps: Pick<BillingDeps, 'pool' | 'tenantExists'>,
  tenantId: string,
): Promise<SubscriptionStatus> {
  await assertTenantExists(deps, tenantId);
  return (await findSubscription(deps.pool, tenantId)) ?? neverBilled(tenantId);
}

/** One more failed payment; enough in a row suspend the Tenant. */
export function recordPaymentFailure(
  deps: BillingDeps,
  tenantId: string,
): Promise<SubscriptionStatus> {
  return change(deps, tenantId, (db) => addPaymentFailure(db, tenantId, deps.suspendAfterFailures));
}

/** Payment details updated: active again, no failures. A repeat changes nothing. */
export async function recordPaymentDetails(
  deps: BillingDeps,
  tenantId: string,
): Promise<SubscriptionStatus> {
  const changed = await change(deps, tenantId, (db) => resetToActive(db, tenantId));
  // Unchanged means it already was active without failures when the update looked.
  return changed ?? { state: 'active', consecutiveFailures: 0 };
}

/**
 * For the other services when their Redis copy is missing: the stored state, written back to
 * Redis on the way (best effort). No Tenant check: one indexed read, nothing else.
 */
export async function refreshedSubscription(
  deps: Pick<BillingDeps, 'pool' | 'mirror'>,
  tenantId: string,
): Promise<SubscriptionRow> {
  const row = (await findSubscription(deps.pool, tenantId)) ?? neverBilled(tenantId);
  await deps.mirror.store(row);
  return row;
}

/**
 * Applies a change and enqueues its message in one transaction, then mirrors it to Redis
 * before the caller answers, so it holds everywhere at once. Redis failing does not undo the
 * committed change: the mirror's sync loop writes it later. `apply` resolving undefined means
 * nothing changed: nothing is announced, and the result is undefined too.
 */
async function change<T extends SubscriptionRow | undefined>(
  deps: BillingDeps,
  tenantId: string,
  apply: (db: Queryable) => Promise<T>,
): Promise<T> {
  await assertTenantExists(deps, tenantId);
  const changed = await withTransaction(deps.pool, async (client) => {
    const row = await apply(client);
    if (row) {
      await enqueue(client, [
        { topic: TOPICS.subscriptionsChanged, key: row.tenantId, value: changedMessage(row) },
      ]);
    }
    return row;
  });
  if (changed) await deps.mirror.store(changed);
  return changed;
}

function changedMessage(row: SubscriptionRow): SubscriptionChangedMessage {
  return {
    schemaVersion: 1,
    type: 'subscription.changed',
    tenantId: row.tenantId,
    state: row.state,
    consecutiveFailures: row.consecutiveFailures,
    version: row.version,
    changedAt: (row.updatedAt ?? new Date()).toISOString(),
  };
}

async function assertTenantExists(
  deps: Pick<BillingDeps, 'tenantExists'>,
  tenantId: string,
): Promise<void> {
  if (!(await deps.tenantExists(tenantId))) throw errors.notFound('no such tenant');
}
