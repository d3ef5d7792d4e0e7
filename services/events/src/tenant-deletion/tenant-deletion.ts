import { runBatchedDeletion, type DeletionStep, type Pool } from '@herald/db';
import type { TenantDataDeletion } from '@herald/internal-api';
import { deletePendingOfTenant } from '@herald/outbox';
import {
  deleteTenantEventsBatch,
  deleteTenantRowsBatch,
  TENANT_KEYED_TABLES,
} from './data/tenant-data.js';

/** How long one call goes on starting batches before it answers (and is called again). */
export const TENANT_DELETION_TIME_BUDGET_MS = 2_000;

/** Rows per batch: a few thousand keep each transaction's locks and WAL small. */
const BATCH = 5_000;

/**
 * The events part of a Tenant's deletion (docs/operations.md#offboarding-a-tenant), called by
 * the auth service until it answers done; idempotent. First its unsent messages, so that no
 * Event of it is published after its data is gone; then its Events, its dedup claims, its
 * event-name catalog, its erased Contacts' ids and its Contact identity projection.
 *
 * Writes that race with it (a request admitted before its keys were revoked, a contact snapshot
 * the relay consumes late) are caught by the second pass auth makes once no such request can
 * still be running.
 */
export function deleteTenantData(
  pool: Pool,
  tenantId: string,
  timeBudgetMs = TENANT_DELETION_TIME_BUDGET_MS,
): Promise<TenantDataDeletion> {
  const steps: DeletionStep[] = [
    {
      name: 'outbox',
      batchSize: BATCH,
      deleteBatch: (n) => deletePendingOfTenant(pool, tenantId, n),
    },
    {
      name: 'events',
      batchSize: BATCH,
      deleteBatch: (n) => deleteTenantEventsBatch(pool, tenantId, n),
    },
    ...TENANT_KEYED_TABLES.map((table): DeletionStep => ({
      name: table,
      batchSize: BATCH,
      deleteBatch: (n) => deleteTenantRowsBatch(pool, table, tenantId, n),
    })),
  ];
  return runBatchedDeletion(steps, { timeBudgetMs });
}
