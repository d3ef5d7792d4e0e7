import { meter, type Counter } from '@herald/telemetry';

/** Never by Tenant: a count and a time, nothing that names anyone. */
export interface RetentionMetrics {
  deleted: Counter;
  lastSuccessMs: number | undefined;
}

let metrics: RetentionMetrics | undefined;

/**
 * Made when the first sweep starts, from the meter provider of that moment: the counter is there
 * (at 0) from then on, the gauge once a sweep has completed.
 */
export function retentionMetrics(): RetentionMetrics {
  if (metrics) return metrics;
  const m = meter('herald.events');
  const made: RetentionMetrics = {
    deleted: m.createCounter('events.retention.deleted', {
      unit: '{event}',
      description:
        'Events deleted by the retention sweep because their Tenant keeps them no longer',
    }),
    lastSuccessMs: undefined,
  };
  made.deleted.add(0);
  m.createObservableGauge('events.retention.last_success', {
    unit: 's',
    description: 'When a retention sweep last completed for every Tenant, in Unix time',
  }).addCallback((result) => {
    if (made.lastSuccessMs !== undefined) result.observe(made.lastSuccessMs / 1000);
  });
  metrics = made;
  return made;
}

export function countDeleted(events: number): void {
  if (events > 0) retentionMetrics().deleted.add(events);
}

export function markSweepSucceeded(at: Date): void {
  retentionMetrics().lastSuccessMs = at.getTime();
}
