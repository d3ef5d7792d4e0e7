import { meter, type ObservableResult } from '@herald/telemetry';

/**
 * Recording's pace against publishing. Recording can commit Events faster than the relay
 * publishes them when both share busy CPUs; the outbox then grows for as long as the load lasts,
 * and so does the delay before Journeys see an Event. While the oldest unpublished message has
 * waited more than `limitMs`, recording leaves a gap after each batch (one batch at a time), which
 * doubles on each sample that still finds it behind, up to `maxGapMs`, and halves once it is not.
 * The gap only slows recording: with publishing stopped (Kafka away) Events are still accepted,
 * a batch every `maxGapMs` at most apart.
 */
export interface PublishPace {
  /** How long recording waits after a batch before the next one starts (ms); 0: no wait. */
  gapMs(): number;
  stop(): void;
}

export interface PublishPaceOptions {
  /** How long the outbox's oldest message has waited (ms). */
  lagMs: () => Promise<number>;
  limitMs: number;
  maxGapMs: number;
  /** How often the lag is read. Default 100 ms. */
  intervalMs?: number;
  /** A read failed: the gap decays as when caught up (an unknown lag never slows recording). */
  onError?: (err: unknown) => void;
}

/** The gap after one more sample: doubling (from 1 ms) while behind, halving to 0 otherwise. */
export function nextGap(gapMs: number, lagMs: number, limitMs: number, maxGapMs: number): number {
  if (lagMs > limitMs) return Math.min(Math.max(gapMs * 2, 1), maxGapMs);
  return gapMs < 1 ? 0 : gapMs / 2;
}

/** Made when the service starts; its gauge reads the gap (events.recording.publish_gap). */
export function createPublishPace(options: PublishPaceOptions): PublishPace {
  let gap = 0;
  const gauge = meter('herald.events').createObservableGauge('events.recording.publish_gap', {
    unit: 's',
    description:
      'The gap recording leaves between batches while publishing is behind; 0 when it is not',
  });
  const observe = (result: ObservableResult) => result.observe(gap / 1000);
  gauge.addCallback(observe);
  let reading = false;
  const timer = setInterval(() => {
    if (reading) return;
    reading = true;
    options
      .lagMs()
      .then(
        (lag) => {
          gap = nextGap(gap, lag, options.limitMs, options.maxGapMs);
        },
        (err: unknown) => {
          gap = nextGap(gap, 0, options.limitMs, options.maxGapMs);
          options.onError?.(err);
        },
      )
      .finally(() => {
        reading = false;
      });
  }, options.intervalMs ?? 100);
  timer.unref();
  return {
    gapMs: () => gap,
    stop: () => {
      clearInterval(timer);
      gauge.removeCallback(observe);
    },
  };
}
