import { runBatchedDeletion, type Pool } from '@herald/db';
import type { TenantDataDeletion } from '@herald/internal-api';
import { deletePendingOfTenant } from '@herald/outbox';
import {
  deleteContactsBatch,
  deleteErasureTombstonesBatch,
  deleteOrganizationsBatch,
} from '../data/tenant-data.js';

/** How long one call goes on starting batches before it answers (and is called again). */
export const TENANT_DELETION_TIME_BUDGET_MS = 2_000;

/**
 * The contacts part of a Tenant's deletion (docs/operations.md#offboarding-a-tenant), called by
 * the auth service until it answers done; idempotent. In this order:
 *
 * 1. its unsent messages (snapshots with personal data), so none is published after its Contacts
 *    are gone and none reaches the events service's identity projection after that was deleted;
 * 2. its Contacts, each with a tombstone for the compacted topic;
 * 3. the bare ids of its erased Contacts, and its organizations.
 *
 * Writes that race with it (a request admitted before its keys were revoked) are caught by the
 * second pass auth makes once no such request can still be running.
 */
export function deleteTenantData(
  pool: Pool,
  tenantId: string,
  timeBudgetMs = TENANT_DELETION_TIME_BUDGET_MS,
): Promise<TenantDataDeletion> {
  return runBatchedDeletion(
    [
      {
        name: 'outbox',
        batchSize: 1_000,
        deleteBatch: (n) => deletePendingOfTenant(pool, tenantId, n),
      },
      {
        name: 'contacts',
        batchSize: 1_000,
        deleteBatch: (n) => deleteContactsBatch(pool, tenantId, n),
      },
      {
        name: 'contact_tombstones',
        batchSize: 5_000,
        deleteBatch: (n) => deleteErasureTombstonesBatch(pool, tenantId, n),
      },
      {
        name: 'organizations',
        batchSize: 5_000,
        deleteBatch: (n) => deleteOrganizationsBatch(pool, tenantId, n),
      },
    ],
    { timeBudgetMs },
  );
}
