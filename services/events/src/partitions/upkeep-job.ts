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
 * A failing run is logged and counted; recording goes on in the partitions there are, and the
 * default partition takes Events no partition covers until a run succeeds.
 */
export function startEventsUpkeep(options: EventsUpkeepOptions): EventsUpkeep {
  const m = meter('@herald/events');
  const runs = m.createCounter('events.upkeep.runs', {
    unit: '{run}',
    description: 'Upkeep runs of the events database by outcome (success, skipped, failure)',
  });
  for (const outcome of ['success', 'skipped', 'failure']) runs.add(0, { outcome });
  let last: { result: PartitionUpkeepResult; at: number } | undefined;
  m.createObservableGauge('events.partitions.ahead', {
    unit: '{partition}',
    description: 'Partitions of events starting after now, ready before the clock needs them',
  }).addCallback((o) => {
    // From the partitions the last run left, against the clock now: it falls while runs fail.
    if (last) o.observe(partitionsAhead(last.result.partitions, new Date()));
  });
  m.createObservableGauge('events.partitions.oldest_age', {
    unit: 's',
    description: 'Age of the oldest partition of events (retention drops it when it is past)',
  }).addCallback((o) => {
    const age = last && oldestPartitionAgeSeconds(last.result.partitions, new Date());
    if (age !== undefined) o.observe(age);
  });
  m.createObservableGauge('events.upkeep.last_success', {
    unit: 's',
    description: 'When an upkeep run of the events database last completed, in Unix time',
  }).addCallback((o) => {
    if (last) o.observe(last.at / 1000);
  });

  const runOnce = async () => {
    try {
      const result = await runPartitionUpkeep(options);
      if (!result.ran) {
        runs.add(1, { outcome: 'skipped' });
        return result;
      }
      await options.afterPartitions?.();
      last = { result, at: Date.now() };
      runs.add(1, { outcome: 'success' });
      return result;
    } catch (err) {
      runs.add(1, { outcome: 'failure' });
      options.logger.warn(
        { err },
        'events upkeep failed; recording goes on, the next run tries again',
      );
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
      await first;
      await timer.stop();
    },
  };
}
