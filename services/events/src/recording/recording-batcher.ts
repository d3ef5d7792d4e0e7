import { BatchHold, createGroupCommit, isQueryCanceled, type Pool } from '@herald/db';
import { errors } from '@herald/errors';
import { TOPICS } from '@herald/messages';
import { recordBatch, type BatchRequest, type RequestResult } from './data/record-batch.js';

export { BatchHold };

/** What a request's transaction came to. Failures are thrown, as by a transaction of its own. */
export type RecordedRequest =
  | { status: 'recorded'; lost: ReadonlySet<string>; receivedAt: Date; remainingMs: number }
  | { status: 'refused'; erased: ReadonlySet<string> };

/** Gathers the transactions of concurrent requests and writes each batch in one call. */
export interface Recorder {
  /**
   * Resolves once the request's batch committed (performance.now() in `committedAt`). The
   * active span, when sampled, is the request's in the batch's trace (createGroupCommit).
   */
  record(request: BatchRequest): Promise<RecordedRequest & { committedAt: number }>;
}

export interface RecorderOptions {
  /** The dedup window (ms). */
  windowMs: number;
  /** Events per batch at most; a larger request still goes, alone. */
  maxBatchEvents: number;
  /** How long a request may wait for others to join its batch while batches are in flight. */
  maxWaitMs: number;
  /** Batches in flight at once (each holds a pool connection while it runs). Default 4. */
  maxBatchesInFlight?: number;
  /** Tests: holds every request in the queue until released, so that they share a batch. */
  hold?: BatchHold;
  /** While it asks for a gap, one batch at a time, each that long after the last (publish-pace.ts). */
  pace?: { gapMs(): number };
}

type BatchOutcome = (
  | Exclude<RequestResult, { status: 'recorded' }>
  | (Extract<RequestResult, { status: 'recorded' }> & { remainingMs: number })
) & { committedAt: number };

/**
 * Group commit of recordings (createGroupCommit): concurrent requests' transactions go to
 * PostgreSQL together, in one call per batch (recordBatch), weighed by their Events.
 * A request whose Contact's erasure lock was taken comes back 'busy' and runs again by itself,
 * waiting for the erasure; a statement timeout answers 503.
 */
export function createRecorder(pool: Pool, options: RecorderOptions): Recorder {
  const batches = createGroupCommit<BatchRequest, BatchOutcome>({
    weight: (request) => request.events.length,
    maxWeight: options.maxBatchEvents,
    maxWaitMs: options.maxWaitMs,
    maxInFlight: options.maxBatchesInFlight,
    hold: options.hold,
    pace: options.pace,
    async write(requests, { links, alone }) {
      const result = await recordBatch(pool, requests, {
        windowMs: options.windowMs,
        wait: alone,
        topic: TOPICS.eventsRecorded,
        links,
      });
      const committedAt = performance.now();
      return result.requests.map((outcome) =>
        outcome.status === 'recorded'
          ? { ...outcome, remainingMs: result.remainingMs, committedAt }
          : { ...outcome, committedAt },
      );
    },
  });

  type Settled = RecordedRequest & { committedAt: number };
  function settle(request: BatchRequest, outcome: BatchOutcome): Settled | Promise<Settled> {
    switch (outcome.status) {
      case 'recorded':
      case 'refused':
        return outcome;
      case 'busy':
        // Alone, outside the batch slots: only this request waits for the erasure.
        return batches.alone(request).then((again) => settle(request, again));
      case 'failed':
        throw Object.assign(new Error(outcome.message), { code: outcome.code });
    }
  }

  return {
    async record(request) {
      try {
        return await settle(request, await batches.submit(request));
      } catch (err) {
        if (isQueryCanceled(err)) {
          throw errors.unavailable(
            'recording took too long; nothing was recorded; retry later',
            err,
          );
        }
        throw err;
      }
    },
  };
}
