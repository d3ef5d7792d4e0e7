import type { Pool } from '@herald/db';
import type { Logger } from '@herald/http';
import {
  createEventPartition,
  dropEventPartition,
  listEventPartitions,
  withUpkeepLock,
} from './data/event-partitions.js';
import {
  partitionsToCreate,
  partitionsToDrop,
  type EventPartition,
  type PartitionSettings,
} from './partition-plan.js';

export interface PartitionUpkeepDeps extends PartitionSettings {
  pool: Pool;
  logger: Logger;
  /**
   * The longest Event retention of any Tenant: partitions wholly older are dropped. undefined
   * when it cannot be known now (auth unreachable): nothing is dropped this time.
   */
  longestRetentionMs: () => Promise<number | undefined>;
  /** How long one DDL statement may wait for its lock before the run leaves it for the next. */
  lockTimeoutMs?: number;
  now?: () => Date;
}

/** What one run did and found. */
export interface PartitionUpkeepResult {
  /** false when another replica held the upkeep lock: it did the work. */
  ran: boolean;
  created: string[];
  dropped: string[];
  /** Events moved out of the default partition into the partitions created. */
  moved: number;
  /** The partitions after the run, but the default one. */
  partitions: EventPartition[];
}

const DEFAULT_LOCK_TIMEOUT_MS = 1_000;

/**
 * One run of partition upkeep under the upkeep lock: creates the partitions ahead (and those a
 * pause of upkeep left missing, moving their Events out of the default partition), then drops the
 * partitions past every Tenant's retention. A failure stops the run where it is; each step is its
 * own transaction, so the next run starts from what is there.
 */
export async function runPartitionUpkeep(
  deps: PartitionUpkeepDeps,
): Promise<PartitionUpkeepResult> {
  const now = deps.now ?? (() => new Date());
  const lockTimeoutMs = deps.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const result = await withUpkeepLock(deps.pool, async (client) => {
    const created: string[] = [];
    const dropped: string[] = [];
    let moved = 0;
    for (const partition of partitionsToCreate(await listEventPartitions(client), now(), deps)) {
      moved += await createEventPartition(
        client,
        partition as EventPartition & { from: Date },
        lockTimeoutMs,
      );
      created.push(partition.name);
    }
    const retentionMs = await deps.longestRetentionMs();
    if (retentionMs !== undefined) {
      for (const partition of partitionsToDrop(
        await listEventPartitions(client),
        now(),
        retentionMs,
      )) {
        await dropEventPartition(client, partition, lockTimeoutMs);
        dropped.push(partition.name);
      }
    }
    if (created.length > 0 || dropped.length > 0) {
      deps.logger.info({ created, dropped, moved }, 'event partitions upkept');
    }
    return { ran: true, created, dropped, moved, partitions: await listEventPartitions(client) };
  });
  return result ?? { ran: false, created: [], dropped: [], moved: 0, partitions: [] };
}
