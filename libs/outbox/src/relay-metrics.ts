import type { Pool } from '@herald/db';
import { meter, type Attributes } from '@herald/telemetry';
import type { BatchObservableCallback, ObservableGauge } from '@opentelemetry/api';

export interface OutboxStats {
  /** Rows not yet published. */
  pending: number;
  /** Age in seconds of the oldest pending row; 0 when none. */
  lagSeconds: number;
}

/** Pending rows and the age of the oldest, in one query. */
export async function outboxStats(pool: Pool): Promise<OutboxStats> {
  const { rows } = await pool.query<{ pending: string; lag: number | null }>(
    `select count(*) as pending,
            greatest(extract(epoch from now() - min(created_at)), 0)::float8 as lag
     from outbox`,
  );
  const row = rows[0];
  return { pending: Number(row?.pending ?? 0), lagSeconds: row?.lag ?? 0 };
}

export interface RelayMetrics {
  /** Counts messages published (and deleted from the outbox). */
  published(count: number): void;
  /** Starts reporting the pending and lag gauges; idempotent. */
  observe(): void;
  /** Stops reporting them; idempotent. */
  stopObserving(): void;
}

/** The metrics reuse one stats query for this long, however often they are observed. */
const STATS_MAX_AGE_MS = 5_000;

/** `outbox.published`, `outbox.pending` and `outbox.lag`, each with the outbox's name. */
export function createRelayMetrics(
  instrumentationName: string,
  attributes: Attributes,
  stats: () => Promise<OutboxStats>,
): RelayMetrics {
  const m = meter(instrumentationName);
  const publishedCounter = m.createCounter('outbox.published', {
    unit: '{message}',
    description: 'Outbox messages published to Kafka (and deleted from the outbox)',
  });
  const pendingGauge = m.createObservableGauge('outbox.pending', {
    unit: '{message}',
    description: 'Outbox messages not yet published',
  });
  const lagGauge = m.createObservableGauge('outbox.lag', {
    unit: 's',
    description: 'Age of the oldest outbox message not yet published; 0 when none',
  });
  const gauges: ObservableGauge[] = [pendingGauge, lagGauge];

  let cached: { at: number; stats: Promise<OutboxStats> } | undefined;
  const observe: BatchObservableCallback = async (result) => {
    if (!cached || Date.now() - cached.at > STATS_MAX_AGE_MS) {
      const entry = { at: Date.now(), stats: stats() };
      cached = entry;
      // A failed query is not cached: the next observation tries again.
      entry.stats.catch(() => {
        if (cached === entry) cached = undefined;
      });
    }
    try {
      const { pending, lagSeconds } = await cached.stats;
      result.observe(pendingGauge, pending, attributes);
      result.observe(lagGauge, lagSeconds, attributes);
    } catch {
      // Database unreachable: no data point rather than a wrong one.
    }
  };
  let observing = false;

  return {
    published: (count) => publishedCounter.add(count, attributes),
    observe() {
      if (observing) return;
      m.addBatchObservableCallback(observe, gauges);
      observing = true;
    },
    stopObserving() {
      if (!observing) return;
      m.removeBatchObservableCallback(observe, gauges);
      observing = false;
    },
  };
}
