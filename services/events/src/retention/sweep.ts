import { databaseNow, type Pool } from '@herald/db';
import type { Logger } from '@herald/http';
import {
  deleteTenantEventsBatch,
  partitionBeforePartitioningExists,
  tenantsWithEventsBefore,
  type SweptTable,
} from './data/retention-deletes.js';
import { countDeleted, markSweepSucceeded, retentionMetrics } from './retention-metrics.js';
import {
  retentionCutoff,
  sweepPlan,
  type RetentionSource,
  type TenantRetention,
} from './retention-policy.js';

export { authRetentionSource } from './clients/auth-retention-source.js';
export {
  longestRetentionDays,
  type RetentionSettings,
  type RetentionSource,
} from './retention-policy.js';

/** Events deleted per transaction: each takes milliseconds, and recording never waits for one. */
export const DEFAULT_SWEEP_BATCH_SIZE = 5_000;

export interface RetentionSweepDeps {
  pool: Pool;
  /** Every Tenant's retention: `authRetentionSource` in the service. */
  retention: RetentionSource;
  logger?: Logger;
  batchSize?: number;
  /** Stops the sweep between two batches (shutdown); what was deleted stays deleted. */
  signal?: AbortSignal;
}

/** What one sweep did. */
export interface RetentionSweepReport {
  /** The longest retention of any Tenant, in days: Tenants at it were left to partition drops. */
  longestRetentionDays: number;
  /** The database's time the cutoffs were counted back from. */
  startedAt: Date;
  durationMs: number;
  /** Tenants whose retention is shorter than the longest: each was swept. */
  tenantsSwept: number;
  /** Events deleted, all Tenants together. */
  deleted: number;
  /** Each Tenant it deleted Events of, with the retention it applied and the cutoff. */
  tenants: Array<{ tenantId: string; days: number; before: Date; deleted: number }>;
  /** Tenants whose sweep failed; the next sweep tries them again. */
  failed: Array<{ tenantId: string; error: string }>;
  /** True when `signal` stopped it before every Tenant was swept. */
  stopped: boolean;
}

/**
 * Deletes the Events of every Tenant whose retention is shorter than the longest one, once they
 * are older than that retention by their receiving time (received_at): organization Events as
 * well as Contacts' ones, so they also leave the Contact exports. The Tenants at the longest
 * retention are left to the partition drops. Which Tenants:
 *   - each Tenant with a retention of its own shorter than the longest;
 *   - when the default is shorter than the longest (some Tenant keeps Events longer than it):
 *     every Tenant without a retention of its own that has Events older than the default, found
 *     in the events table itself, so no list of all Tenants is needed.
 * Each Tenant's Events go in small transactions (`batchSize`), oldest first; deletes take no
 * lock recording waits for. Several replicas sweeping at once only find less to delete. A
 * Tenant that fails is reported and the others are still swept; then the sweep throws after the
 * last, so its caller counts it as failed. Without the settings (auth unreachable) it deletes
 * nothing and throws.
 */
export async function sweepRetention(deps: RetentionSweepDeps): Promise<RetentionSweepReport> {
  const started = performance.now();
  retentionMetrics();
  const plan = sweepPlan(await deps.retention());
  const batchSize = deps.batchSize ?? DEFAULT_SWEEP_BATCH_SIZE;
  const startedAt = await databaseNow(deps.pool);
  const report: RetentionSweepReport = {
    longestRetentionDays: plan.longestDays,
    startedAt,
    durationMs: 0,
    tenantsSwept: 0,
    deleted: 0,
    tenants: [],
    failed: [],
    stopped: false,
  };

  const sweep = async ({ tenantId, days }: TenantRetention, table: SweptTable = 'events') => {
    if (deps.signal?.aborted) {
      report.stopped = true;
      return;
    }
    const before = retentionCutoff(startedAt, days);
    report.tenantsSwept += 1;
    try {
      const { deleted, complete } = await deleteTenantEvents(
        deps,
        { tenantId, before, batchSize },
        table,
      );
      if (deleted > 0) report.tenants.push({ tenantId, days, before, deleted });
      report.deleted += deleted;
      if (!complete) report.stopped = true;
    } catch (err) {
      deps.logger?.warn({ err, tenantId }, 'retention sweep failed for a Tenant');
      report.failed.push({ tenantId, error: err instanceof Error ? err.message : String(err) });
    }
  };

  for (const tenant of plan.shorter) await sweep(tenant);
  if (plan.defaultDays !== undefined) {
    const defaultDays = plan.defaultDays;
    const before = retentionCutoff(startedAt, defaultDays);
    const found = deps.signal?.aborted ? [] : await tenantsWithEventsBefore(deps.pool, before);
    if (deps.signal?.aborted) report.stopped = true;
    for (const tenantId of found) {
      if (!plan.ownRetention.has(tenantId.toLowerCase()))
        await sweep({ tenantId, days: defaultDays });
    }
  }

  // The Events recorded before `events` was partitioned share one partition, dropped only once
  // all of it is past the longest retention: the Tenants at that retention are swept in it alone.
  if (!deps.signal?.aborted && (await partitionBeforePartitioningExists(deps.pool))) {
    const before = retentionCutoff(startedAt, plan.longestDays);
    const table = 'events_before_partitions';
    for (const tenantId of await tenantsWithEventsBefore(deps.pool, before, table)) {
      await sweep({ tenantId, days: plan.longestDays }, table);
    }
  }

  report.durationMs = Math.round(performance.now() - started);
  if (report.failed.length > 0) {
    throw Object.assign(
      new Error(`the retention sweep failed for ${report.failed.length} Tenant(s)`),
      { report },
    );
  }
  if (!report.stopped) markSweepSucceeded(new Date());
  return report;
}

/** One Tenant's Events received before `before`, batch after batch, oldest first. */
async function deleteTenantEvents(
  deps: RetentionSweepDeps,
  tenant: { tenantId: string; before: Date; batchSize: number },
  table: SweptTable,
): Promise<{ deleted: number; complete: boolean }> {
  let deleted = 0;
  let after: string | undefined;
  for (;;) {
    const batch = await deleteTenantEventsBatch(deps.pool, { ...tenant, after }, table);
    deleted += batch.deleted;
    countDeleted(batch.deleted);
    if (batch.through === undefined) return { deleted, complete: true };
    if (deps.signal?.aborted) return { deleted, complete: false };
    after = batch.through;
  }
}
