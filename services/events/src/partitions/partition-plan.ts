/**
 * What partition upkeep does to `events`, decided from the partitions there are and the clock:
 * pure, so the rules are tested without a database (test/unit/partition-plan.test.ts).
 */

/** A range partition of `events`: Events with `from <= received_at < to`. */
export interface EventPartition {
  name: string;
  /** null for the partition of every Event recorded before the table was partitioned. */
  from: Date | null;
  to: Date;
}

export interface PartitionSettings {
  /** The time one partition spans. */
  partitionMs: number;
  /** Partitions kept ready after the one the clock is in. */
  ahead: number;
}

/** `events_p20261206_000000`: the partition starting at that UTC time. */
export function partitionName(from: Date): string {
  const iso = from.toISOString(); // 2026-12-06T00:00:00.000Z
  return `events_p${iso.slice(0, 10).replaceAll('-', '')}_${iso.slice(11, 19).replaceAll(':', '')}`;
}

/**
 * The partitions to create, oldest first: each starts where the newest one ends, until `ahead`
 * of them start after `now`. A gap behind the clock (upkeep stopped for a while) is filled too:
 * the Events recorded meanwhile wait in the default partition and move into theirs. With no range
 * partition at all, the first starts at `now` rounded down to the partition span.
 */
export function partitionsToCreate(
  existing: readonly EventPartition[],
  now: Date,
  { partitionMs, ahead }: PartitionSettings,
): EventPartition[] {
  if (!(partitionMs > 0) || !Number.isInteger(ahead) || ahead < 1) {
    throw new RangeError('partitionMs must be positive and ahead a whole number of at least 1');
  }
  let end =
    existing.length > 0
      ? Math.max(...existing.map((p) => p.to.getTime()))
      : Math.floor(now.getTime() / partitionMs) * partitionMs;
  let ready = partitionsAhead(existing, now);
  const created: EventPartition[] = [];
  while (end <= now.getTime() || ready < ahead) {
    const from = new Date(end);
    const to = new Date(end + partitionMs);
    created.push({ name: partitionName(from), from, to });
    if (end > now.getTime()) ready += 1;
    end = to.getTime();
  }
  return created;
}

/**
 * The partitions whose every Event is older than the longest retention of any Tenant: dropped
 * whole. A partition that holds younger Events too stays until it has none.
 */
export function partitionsToDrop(
  existing: readonly EventPartition[],
  now: Date,
  longestRetentionMs: number,
): EventPartition[] {
  const cutoff = now.getTime() - longestRetentionMs;
  return existing.filter((p) => p.to.getTime() <= cutoff);
}

/** Partitions starting after `now`: what the clock can run into before upkeep must run. */
export function partitionsAhead(existing: readonly EventPartition[], now: Date): number {
  return existing.filter((p) => p.from !== null && p.from.getTime() > now.getTime()).length;
}

/**
 * The age of the oldest partition: the time since its start, or since its end for the partition
 * of the Events recorded before partitioning, whose start is unknown. undefined with none.
 */
export function oldestPartitionAgeSeconds(
  existing: readonly EventPartition[],
  now: Date,
): number | undefined {
  if (existing.length === 0) return undefined;
  const starts = existing.map((p) => (p.from ?? p.to).getTime());
  return Math.max(0, (now.getTime() - Math.min(...starts)) / 1000);
}
