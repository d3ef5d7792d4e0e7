import { runBatchedDeletion, type Pool } from '@herald/db';
import { errors } from '@herald/errors';
import type { TenantDataDeletion } from '@herald/internal-api';
import { deletePendingOfTenant } from '@herald/outbox';
import { deleteSubscription } from '../data/tenant-data.js';
import type { SubscriptionMirror } from './redis-mirror.js';

/** How long one call goes on starting batches before it answers (and is called again). */
export const TENANT_DELETION_TIME_BUDGET_MS = 2_000;

/**
 * The billing part of a Tenant's deletion (docs/operations.md#offboarding-a-tenant), called by
 * the auth service until it answers done; idempotent. Its unsent messages, then its subscription
 * (with a tombstone for the compacted topic), then the Redis copy every service reads, which
 * never expires by itself. A Redis failure fails the call (503), and auth calls again.
 */
export async function deleteTenantData(
  deps: { pool: Pool; mirror: Pick<SubscriptionMirror, 'forget'> },
  tenantId: string,
  timeBudgetMs = TENANT_DELETION_TIME_BUDGET_MS,
): Promise<TenantDataDeletion> {
  const result = await runBatchedDeletion(
    [
      {
        name: 'outbox',
        batchSize: 1_000,
        deleteBatch: (n) => deletePendingOfTenant(deps.pool, tenantId, n),
      },
      {
        // One row at most: a batch of one.
        name: 'subscriptions',
        batchSize: 1,
        deleteBatch: async () => ((await deleteSubscription(deps.pool, tenantId)) ? 1 : 0),
      },
    ],
    { timeBudgetMs },
  );
  if (result.done) {
    await deps.mirror.forget(tenantId).catch((err: unknown) => {
      throw errors.unavailable(
        "Redis is unreachable: the Tenant's subscription copy is still there; call again",
        err,
      );
    });
  }
  return result;
}
