import { RETRYABLE, type Pool } from '@herald/db';
import { errors } from '@herald/errors';
import { TOPICS } from '@herald/messages';
import {
  ROOT_CONTEXT,
  TraceFlags,
  batchSpanPlacement,
  context,
  trace,
  type Context,
  type Link,
  type SpanContext,
} from '@herald/telemetry';
import { recordBatch, type BatchRequest, type RequestResult } from '../data/record-batch.js';

/** What a request's transaction came to. Failures are thrown, as by a transaction of its own. */
export type RecordedRequest =
  | { status: 'recorded'; lost: ReadonlySet<string>; receivedAt: Date; remainingMs: number }
  | { status: 'refused'; erased: ReadonlySet<string> };

/** Gathers the transactions of concurrent requests and writes each batch in one call. */
export interface Recorder {
  /**
   * Resolves once the request's batch committed (performance.now() in `committedAt`). The
   * active span, when sampled, is the request's in the batch's trace (see batchContext).
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

/**
 * Subtransactions that write get their own transaction id; PostgreSQL keeps 64 of them per
 * session in shared memory, and beyond that every snapshot in the cluster gets slower.
 */
const MAX_BATCH_REQUESTS = 64;
const ATTEMPTS = 3;
const QUERY_CANCELED = '57014';
const RETRY_AFTER_ABORT = new Set<string>([RETRYABLE.deadlock, RETRYABLE.serializationFailure]);

/** A SQLSTATE means the server answered: the failed transaction was rolled back. */
const sqlState = (err: unknown): string | undefined => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
};

/** Tests: keeps a recorder's requests queued until `release`. */
export class BatchHold {
  #held = false;
  #recorders = new Set<{ queued(): number; kick(): void }>();
  hold(): void {
    this.#held = true;
  }
  release(): void {
    this.#held = false;
    for (const recorder of this.#recorders) recorder.kick();
  }
  get held(): boolean {
    return this.#held;
  }
  /** How many requests wait in the queue. */
  waiting(): number {
    let n = 0;
    for (const recorder of this.#recorders) n += recorder.queued();
    return n;
  }
  attach(recorder: { queued(): number; kick(): void }): void {
    this.#recorders.add(recorder);
  }
}

interface Pending {
  request: BatchRequest;
  events: number;
  since: number;
  /** The context `record` was called in: the request's. */
  context: Context;
  /** Its active span's context when sampled. */
  origin: SpanContext | undefined;
  resolve(outcome: RecordedRequest & { committedAt: number }): void;
  reject(err: unknown): void;
}

/** The active span's context in `at`, when it is sampled. */
function sampledSpan(at: Context): SpanContext | undefined {
  const origin = trace.getSpan(at)?.spanContext();
  return origin !== undefined && (origin.traceFlags & TraceFlags.SAMPLED) !== 0
    ? origin
    : undefined;
}

/**
 * Where a batch's transaction runs (batchSpanPlacement): its sampled requests all of one trace,
 * in the first one's context (its `db.transaction` is then a child of that request's
 * `events.write`); of several traces, at the root (a span of its own, linked to each); none
 * sampled, in the first request's context, where no span is recorded.
 */
function batchContext(batch: readonly Pending[]): { at: Context; links: Link[] | undefined } {
  const placement = batchSpanPlacement(batch.flatMap((p) => (p.origin ? [p.origin] : [])));
  if (placement === undefined) return { at: batch[0]!.context, links: undefined };
  const { links, parent } = placement;
  const first = parent && batch.find((p) => p.origin === parent)!;
  return { at: first ? first.context : ROOT_CONTEXT, links };
}

/**
 * Group commit. Requests queue while `maxBatchesInFlight` batches run; a batch returning sends
 * the queue as the next one (up to `maxBatchEvents`). With a slot free, the queue goes at once
 * when nothing is in flight (after the current I/O callbacks, so requests that arrived together
 * go together), else after `maxWaitMs` at most. Each request is answered when its batch returns.
 *
 * A batch failing as a whole (nothing of it was written) gives each request what it would have
 * got alone: a deadlock or serialization failure runs the batch again (3 attempts in all), then
 * each request alone; a statement timeout answers 503; another failure the server reported runs
 * each request alone; a lost connection is passed on (503) without a retry, since the batch
 * may have committed.
 */
export function createRecorder(pool: Pool, options: RecorderOptions): Recorder {
  const inFlightMax = Math.max(1, options.maxBatchesInFlight ?? 4);
  const queue: Pending[] = [];
  let queuedEvents = 0;
  let inFlight = 0;
  let timer: NodeJS.Timeout | undefined;
  let soon = false;
  let lastEnded = 0;
  let gapTimer: NodeJS.Timeout | undefined;

  const self = {
    queued: () => queue.length,
    kick: () => dispatch(true),
  };
  options.hold?.attach(self);

  function take(): Pending[] {
    const batch: Pending[] = [queue.shift()!];
    let events = batch[0]!.events;
    while (
      queue.length > 0 &&
      batch.length < MAX_BATCH_REQUESTS &&
      events + queue[0]!.events <= options.maxBatchEvents
    ) {
      events += queue[0]!.events;
      batch.push(queue.shift()!);
    }
    queuedEvents -= events;
    return batch;
  }

  /** Sends batches while slots are free and the queue is due; `now`: due whatever it waited. */
  function dispatch(now: boolean): void {
    if (options.hold?.held) return;
    const gap = options.pace?.gapMs() ?? 0;
    if (gap > 0 && queue.length > 0 && inFlight === 0) {
      const wait = lastEnded + gap - performance.now();
      if (wait > 0) {
        gapTimer ??= setTimeout(() => {
          gapTimer = undefined;
          dispatch(true);
        }, wait);
        return;
      }
    }
    const slots = gap > 0 ? 1 : inFlightMax;
    while (queue.length > 0 && inFlight < slots) {
      const waited = performance.now() - queue[0]!.since;
      const due =
        now ||
        inFlight === 0 ||
        waited >= options.maxWaitMs ||
        queuedEvents >= options.maxBatchEvents ||
        queue.length >= MAX_BATCH_REQUESTS;
      if (!due) {
        timer ??= setTimeout(
          () => {
            timer = undefined;
            dispatch(false);
          },
          Math.max(0, options.maxWaitMs - waited),
        );
        return;
      }
      const batch = take();
      inFlight += 1;
      void run(batch, false).finally(() => {
        inFlight -= 1;
        lastEnded = performance.now();
        dispatch(true);
      });
      now = false;
    }
  }

  /** Runs a batch; resolves or rejects each of its requests, never throws. */
  async function run(batch: readonly Pending[], wait: boolean): Promise<void> {
    const requests = batch.map((p) => p.request);
    const { at, links } = batchContext(batch);
    const write = () =>
      recordBatch(pool, requests, {
        windowMs: options.windowMs,
        wait,
        topic: TOPICS.eventsRecorded,
        links,
      });
    let failure: unknown;
    for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
      try {
        const result = await context.with(at, write);
        const committedAt = performance.now();
        result.requests.forEach((outcome, i) =>
          settle(batch[i]!, outcome, result.remainingMs, committedAt),
        );
        return;
      } catch (err) {
        failure = err;
        const code = sqlState(err);
        if (code === undefined || code === QUERY_CANCELED) break;
        if (!RETRY_AFTER_ABORT.has(code)) break;
      }
    }
    const code = sqlState(failure);
    if (code === QUERY_CANCELED) {
      const unavailable = errors.unavailable(
        'recording took too long; nothing was recorded; retry later',
        failure,
      );
      for (const p of batch) p.reject(unavailable);
    } else if (code !== undefined && batch.length > 1) {
      // Nothing was written: each request alone finds whether it alone caused the failure.
      await Promise.all(batch.map((p) => run([p], wait)));
    } else {
      for (const p of batch) p.reject(failure);
    }
  }

  function settle(p: Pending, outcome: RequestResult, remainingMs: number, committedAt: number) {
    switch (outcome.status) {
      case 'recorded':
        p.resolve({ ...outcome, remainingMs, committedAt });
        return;
      case 'refused':
        p.resolve({ ...outcome, committedAt });
        return;
      case 'busy':
        // Alone, outside the batch slots: only this request waits for the erasure.
        void run([p], true);
        return;
      case 'failed':
        p.reject(Object.assign(new Error(outcome.message), { code: outcome.code }));
    }
  }

  return {
    record(request) {
      const at = context.active();
      return new Promise((resolve, reject) => {
        queue.push({
          request,
          events: request.events.length,
          since: performance.now(),
          context: at,
          origin: sampledSpan(at),
          resolve,
          reject,
        });
        queuedEvents += request.events.length;
        if (!soon) {
          soon = true;
          setImmediate(() => {
            soon = false;
            dispatch(false);
          });
        }
      });
    },
  };
}
