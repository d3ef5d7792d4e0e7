import { meter } from '@herald/telemetry';
import { every } from '../background-job.js';
import { oldestPartitionAgeSeconds, partitionsAhead } from './partition-plan.js';
import {
  runPartitionUpkeep,
  type PartitionUpkeepDeps,
  type PartitionUpkeepResult,
} from './partition-upkeep.js';

export interface EventsUpkeepOptions extends PartitionUpkeepDeps {
  /** Between runs; the first runs at start. */
  intervalMs: number;
  /** Runs after partition upkeep, in the same job (the per-Tenant retention sweep). */
  afterPartitions?: () => Promise<unknown>;
  /** After a failed run, the next comes this soon (or at the interval, when shorter); 30 s. */
  retryAfterFailureMs?: number;
}

export interface EventsUpkeep {
  /** One run now, as the timer would (tests, and the start). */
  runOnce(): Promise<PartitionUpkeepResult | undefined>;
  stop(): Promise<void>;
}

/**
 * The events database's upkeep, run by every replica of the events service: each run takes the
 * upkeep lock or leaves the work to the replica holding it. Metrics (docs/metrics.md):
 *   events.partitions.ahead        gauge  partitions starting after now
 *   events.partitions.oldest_age   gauge  age of the oldest partition, s
 *   events.upkeep.last_success     gauge  when a run last completed, Unix time in s
 *   events.upkeep.runs             counter runs by `outcome`: success, skipped (another replica
 *                                          held the lock) or failure
 * A failing run is logged and counted, and tried again after 30 s; recording goes on in the
 * partitions there are, and the default partition takes Events no partition covers until a run
 * succeeds. The partition gauges follow each run that got through the partitions, even when the
 * retention sweep after them failed.
 */
export function startEventsUpkeep(options: EventsUpkeepOptions): EventsUpkeep {
  const m = meter('@herald/events');
  const runs = m.createCounter('events.upkeep.runs', {
    unit: '{run}',
    description: 'Upkeep runs of the events database by outcome (success, skipped, failure)',
  });
  for (const outcome of ['success', 'skipped', 'failure']) runs.add(0, { outcome });
  // The partitions the last run left (the gauges read them against the clock now, so they fall
  // while runs fail), and when a whole run last succeeded.
  let partitions: PartitionUpkeepResult['partitions'] | undefined;
  let lastSuccessAt: number | undefined;
  m.createObservableGauge('events.partitions.ahead', {
    unit: '{partition}',
    description: 'Partitions of events starting after now, ready before the clock needs them',
  }).addCallback((o) => {
    // From the partitions the last run left, against the clock now: it falls while runs fail.
    if (partitions) o.observe(partitionsAhead(partitions, new Date()));
  });
  m.createObservableGauge('events.partitions.oldest_age', {
    unit: 's',
    description: 'Age of the oldest partition of events (retention drops it when it is past)',
  }).addCallback((o) => {
    const age = partitions && oldestPartitionAgeSeconds(partitions, new Date());
    if (age !== undefined) o.observe(age);
  });
  m.createObservableGauge('events.upkeep.last_success', {
    unit: 's',
    description: 'When an upkeep run of the events database last completed, in Unix time',
  }).addCallback((o) => {
    if (lastSuccessAt !== undefined) o.observe(lastSuccessAt / 1000);
  });

  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let retrying: Promise<unknown> | undefined;
  const runOnce = async (): Promise<PartitionUpkeepResult | undefined> => {
    try {
      const result = await runPartitionUpkeep(options);
      if (!result.ran) {
        runs.add(1, { outcome: 'skipped' });
        return result;
      }
      partitions = result.partitions;
      await options.afterPartitions?.();
      lastSuccessAt = Date.now();
      runs.add(1, { outcome: 'success' });
      return result;
    } catch (err) {
      runs.add(1, { outcome: 'failure' });
      options.logger.warn(
        { err },
        'events upkeep failed; recording goes on, the next run tries again',
      );
      // Sooner than the interval: a dependency away at start (auth, for the retention) is
      // usually back within seconds.
      if (!stopped) {
        clearTimeout(retry);
        retry = setTimeout(
          () => {
            retrying = runOnce();
          },
          Math.min(options.intervalMs, options.retryAfterFailureMs ?? 30_000),
        );
      }
      return undefined;
    }
  };
  const first = runOnce();
  const timer = every(options.intervalMs, async () => {
    await runOnce();
  });
  return {
    runOnce,
    async stop() {
      stopped = true;
      clearTimeout(retry);
      await first;
      await retrying;
      await timer.stop();
      clearTimeout(retry);
    },
  };
}
