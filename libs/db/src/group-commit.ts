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
import { RETRYABLE } from './pool.js';

/** What a batch's write learns besides its requests. */
export interface BatchWrite {
  /** Links to each sampled request, for the batch's transaction span (batchSpanPlacement). */
  links: Link[] | undefined;
  /** True when the request runs by itself through `alone`, outside the batch slots. */
  alone: boolean;
}

export interface GroupCommitOptions<Req, Out> {
  /**
   * Writes the requests in one transaction and answers each one's outcome, in their order. It
   * throws when nothing of the batch was written.
   */
  write(requests: readonly Req[], batch: BatchWrite): Promise<readonly Out[]>;
  /** A request's share of `maxWeight` (Events, rows). Default 1. */
  weight?(request: Req): number;
  /** Weight per batch at most; a heavier request still goes, alone. */
  maxWeight: number;
  /** How long a request may wait for others to join its batch while batches are in flight. */
  maxWaitMs: number;
  /** Batches in flight at once (each holds a pool connection while it runs). Default 4. */
  maxInFlight?: number;
  /** Tests: holds every request in the queue until released, so that they share a batch. */
  hold?: BatchHold;
  /** While it asks for a gap, one batch at a time, each that long after the last. */
  pace?: { gapMs(): number };
}

/** Gathers the transactions of concurrent requests and writes each batch in one call. */
export interface GroupCommit<Req, Out> {
  /**
   * Resolves with the request's outcome once its batch committed. The active span, when
   * sampled, is the request's in the batch's trace: the batch's transaction is a child of it
   * when every sampled request of the batch is of one trace, and else a root linked to each.
   */
  submit(request: Req): Promise<Out>;
  /** Runs one request by itself (`alone` set), at once and outside the batch slots. */
  alone(request: Req): Promise<Out>;
}

/**
 * Subtransactions that write get their own transaction id; PostgreSQL keeps 64 of them per
 * session in shared memory, and beyond that every snapshot in the cluster gets slower.
 */
const MAX_BATCH_REQUESTS = 64;
const ATTEMPTS = 3;
const QUERY_CANCELED = '57014';
const RETRY_AFTER_ABORT = new Set<string>([RETRYABLE.deadlock, RETRYABLE.serializationFailure]);

/**
 * The SQLSTATE of an error the server answered (node-postgres gives it a severity): the failed
 * transaction was rolled back. Undefined for a client-side failure (EPIPE has five letters too).
 */
export const sqlState = (err: unknown): string | undefined => {
  const { code, severity } = (err ?? {}) as { code?: unknown; severity?: unknown };
  return typeof code === 'string' && typeof severity === 'string' && /^[0-9A-Z]{5}$/.test(code)
    ? code
    : undefined;
};

/** True when the statement timeout cancelled the query. */
export const isQueryCanceled = (err: unknown): boolean => sqlState(err) === QUERY_CANCELED;

/** Tests: keeps the queues of the group commits it is given to until `release`. */
export class BatchHold {
  #held = false;
  #queues = new Set<{ queued(): number; kick(): void }>();
  hold(): void {
    this.#held = true;
  }
  release(): void {
    this.#held = false;
    for (const queue of this.#queues) queue.kick();
  }
  get held(): boolean {
    return this.#held;
  }
  /** How many requests wait in the queues. */
  waiting(): number {
    let n = 0;
    for (const queue of this.#queues) n += queue.queued();
    return n;
  }
  attach(queue: { queued(): number; kick(): void }): void {
    this.#queues.add(queue);
  }
}

interface Pending<Req, Out> {
  request: Req;
  weight: number;
  since: number;
  /** The context `submit` was called in: the request's. */
  context: Context;
  /** Its active span's context when sampled. */
  origin: SpanContext | undefined;
  resolve(outcome: Out): void;
  reject(err: unknown): void;
}

function sampledSpan(at: Context): SpanContext | undefined {
  const origin = trace.getSpan(at)?.spanContext();
  return origin !== undefined && (origin.traceFlags & TraceFlags.SAMPLED) !== 0
    ? origin
    : undefined;
}

/**
 * Where a batch's transaction runs (batchSpanPlacement): its sampled requests all of one trace,
 * in the first one's context; of several traces, at the root (a span of its own, linked to
 * each); none sampled, in the first request's context, where no span is recorded.
 */
function batchContext<Req, Out>(
  batch: readonly Pending<Req, Out>[],
): { at: Context; links: Link[] | undefined } {
  const placement = batchSpanPlacement(batch.flatMap((p) => (p.origin ? [p.origin] : [])));
  if (placement === undefined) return { at: batch[0]!.context, links: undefined };
  const { links, parent } = placement;
  const first = parent && batch.find((p) => p.origin === parent)!;
  return { at: first ? first.context : ROOT_CONTEXT, links };
}

/**
 * Group commit. Requests queue while `maxInFlight` batches run; a batch returning sends the
 * queue as the next one (up to `maxWeight`, 64 requests). With a slot free, the queue goes at
 * once when nothing is in flight (after the current I/O callbacks, so requests that arrived
 * together go together), else after `maxWaitMs` at most. Each request is answered when its
 * batch returns.
 *
 * A batch failing as a whole (nothing of it was written) gives each request what it would have
 * got alone: a deadlock or serialization failure runs the batch again (3 attempts in all), then
 * each request alone; a statement timeout fails every request with it; another failure the
 * server reported runs each request alone; a lost connection is passed on without a retry,
 * since the batch may have committed.
 */
export function createGroupCommit<Req, Out>(
  options: GroupCommitOptions<Req, Out>,
): GroupCommit<Req, Out> {
  const inFlightMax = Math.max(1, options.maxInFlight ?? 4);
  const weigh = (request: Req) => options.weight?.(request) ?? 1;
  const queue: Pending<Req, Out>[] = [];
  let queuedWeight = 0;
  let inFlight = 0;
  let timer: NodeJS.Timeout | undefined;
  let soon = false;
  let lastEnded = 0;
  let gapTimer: NodeJS.Timeout | undefined;

  options.hold?.attach({ queued: () => queue.length, kick: () => dispatch(true) });

  function take(): Pending<Req, Out>[] {
    const batch = [queue.shift()!];
    let weight = batch[0]!.weight;
    while (
      queue.length > 0 &&
      batch.length < MAX_BATCH_REQUESTS &&
      weight + queue[0]!.weight <= options.maxWeight
    ) {
      weight += queue[0]!.weight;
      batch.push(queue.shift()!);
    }
    queuedWeight -= weight;
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
        queuedWeight >= options.maxWeight ||
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
  async function run(batch: readonly Pending<Req, Out>[], alone: boolean): Promise<void> {
    const requests = batch.map((p) => p.request);
    const { at, links } = batchContext(batch);
    const write = () => options.write(requests, { links, alone });
    let failure: unknown;
    for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
      try {
        const outcomes = await context.with(at, write);
        batch.forEach((p, i) => p.resolve(outcomes[i]!));
        return;
      } catch (err) {
        failure = err;
        const code = sqlState(err);
        if (code === undefined || !RETRY_AFTER_ABORT.has(code)) break;
      }
    }
    const code = sqlState(failure);
    if (code !== undefined && code !== QUERY_CANCELED && batch.length > 1) {
      // Nothing was written: each request alone finds whether it alone caused the failure.
      await Promise.all(batch.map((p) => run([p], alone)));
    } else {
      for (const p of batch) p.reject(failure);
    }
  }

  function pending(request: Req, resolve: (o: Out) => void, reject: (e: unknown) => void) {
    const at = context.active();
    return {
      request,
      weight: weigh(request),
      since: performance.now(),
      context: at,
      origin: sampledSpan(at),
      resolve,
      reject,
    };
  }

  return {
    submit(request) {
      return new Promise((resolve, reject) => {
        const p = pending(request, resolve, reject);
        queue.push(p);
        queuedWeight += p.weight;
        if (!soon) {
          soon = true;
          setImmediate(() => {
            soon = false;
            dispatch(false);
          });
        }
      });
    },
    alone(request) {
      return new Promise((resolve, reject) => {
        void run([pending(request, resolve, reject)], true);
      });
    },
  };
}
