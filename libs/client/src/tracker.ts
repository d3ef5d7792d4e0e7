// A batching tracker in the style of analytics-node: `track()` queues an Event and returns at
// once; batches go out per route (each route is its own endpoint) when `flushAt` Events wait,
// every `flushIntervalMs`, and on `flush()` / `close()`. Each Event gets its dedupKey when it is
// queued, so every resend of its batch records it once.
import type { CallOptions } from './http.js';
import type { Events } from './client.js';
import { prepareEvent, type EventInput, type PreparedEvent } from './event.js';
import { CLIENT_CODES, HeraldError, QueueFullError, UnresolvedIdentityError } from './errors.js';
import { EVENT_ROUTES, type EventRoute } from './types.js';

/** An Event for `track()`: `occurredAt` defaults to the time of the call. */
export type TrackInput<R extends EventRoute> = Omit<EventInput<R>, 'occurredAt'> & {
  occurredAt?: string | Date;
};

/** An Event as the tracker queued and sent it: `occurredAt` and `dedupKey` always set. */
export type TrackedEvent<R extends EventRoute = EventRoute> = PreparedEvent<R>;

export interface TrackerOptions {
  /** Events per request, and the queue length that sends one at once: 1 to 1,000. Default 100. */
  flushAt?: number;
  /** The longest an Event waits in the queue before its batch is sent (ms). Default 10,000. */
  flushIntervalMs?: number;
  /**
   * Events the tracker holds at most, queued or in flight, over every route; `track()` beyond it
   * throws a QueueFullError. Default 10,000.
   */
  maxQueueSize?: number;
  /**
   * A request's body at most, in bytes (the API refuses bodies over 1 MiB); a batch closes
   * early to stay under it. Default 1,000,000.
   */
  maxBatchBytes?: number;
  /**
   * Called with the error and the Events of a batch that could not be recorded, once the
   * client's resends were used up or the answer was final (a 400, 402, 403, …). After a 422,
   * the unresolved Events are reported and the rest of the batch is sent again. Default: logs
   * with console.error.
   */
  onError?: (error: Error, events: readonly TrackedEvent[], route: EventRoute) => void;
  /** Attempts, deadline and timeout for each batch request (default: the client's). */
  request?: Omit<CallOptions, 'signal' | 'requestId'>;
}

interface Queued {
  event: TrackedEvent;
  bytes: number;
}

interface RouteState {
  queue: Queued[];
  /** The route's sending loop, while it runs: one batch in flight per route at a time. */
  draining: Promise<void> | undefined;
  /** Send what is queued even below `flushAt` (set by flush, the timer and close). */
  flushRequested: boolean;
}

const encoder = new TextEncoder();
/** The longest delay setTimeout keeps (2^31 - 1 ms, about 24.8 days). */
const MAX_TIMER_MS = 2_147_483_647;

export class Tracker {
  readonly flushAt: number;
  readonly flushIntervalMs: number;
  readonly maxQueueSize: number;
  readonly maxBatchBytes: number;
  private readonly onError: NonNullable<TrackerOptions['onError']>;
  private readonly requestOptions: CallOptions;
  private readonly routes = new Map<EventRoute, RouteState>();
  /** Events queued or in flight. */
  private held = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly events: Events,
    options: TrackerOptions = {},
  ) {
    this.flushAt = options.flushAt ?? 100;
    this.flushIntervalMs = options.flushIntervalMs ?? 10_000;
    this.maxQueueSize = options.maxQueueSize ?? 10_000;
    this.maxBatchBytes = options.maxBatchBytes ?? 1_000_000;
    if (!Number.isInteger(this.flushAt) || this.flushAt < 1 || this.flushAt > 1000) {
      throw new RangeError('flushAt must be an integer from 1 to 1,000');
    }
    if (!(this.flushIntervalMs > 0)) throw new RangeError('flushIntervalMs must be positive');
    if (!Number.isInteger(this.maxQueueSize) || this.maxQueueSize < 1) {
      throw new RangeError('maxQueueSize must be a positive integer');
    }
    if (!(this.maxBatchBytes >= 1024)) throw new RangeError('maxBatchBytes must be at least 1024');
    this.onError =
      options.onError ??
      ((error, events, route) =>
        console.error(`[herald] ${events.length} Event(s) for ${route} not recorded:`, error));
    this.requestOptions = { ...options.request };
    for (const route of EVENT_ROUTES) {
      this.routes.set(route, { queue: [], draining: undefined, flushRequested: false });
    }
  }

  /** Events queued or in flight. */
  get size(): number {
    return this.held;
  }

  /**
   * Queues an Event for `route` and returns its dedupKey (yours, or the one given to it now).
   * Throws a QueueFullError when `maxQueueSize` Events are held, a HeraldError
   * `tracker_closed` after `close()`, and a HeraldError `forbidden` for an Event a publishable
   * key may not record (see `PublishableKeyCredentials.identifierLookup`).
   */
  track<R extends EventRoute>(route: R, event: TrackInput<R>): string {
    if (this.closing) {
      throw new HeraldError('the tracker is closed: the Event was not queued', {
        code: CLIENT_CODES.trackerClosed,
      });
    }
    const state = this.routes.get(route);
    if (!state) {
      throw new TypeError(
        `unknown Event route ${JSON.stringify(route)}: one of ${EVENT_ROUTES.join(', ')}`,
      );
    }
    if (this.held >= this.maxQueueSize) throw new QueueFullError(this.maxQueueSize);
    // A refusal the API would give every batch is thrown here, before the Event is queued.
    this.events.assertAllowed(route, event as EventInput<R>);
    const prepared = prepareEvent<R>({
      ...event,
      occurredAt: event.occurredAt ?? new Date(),
    } as EventInput<R>) as TrackedEvent;
    const bytes = encoder.encode(JSON.stringify(prepared)).length;
    if (bytes + 2 > this.maxBatchBytes) {
      throw new RangeError(
        `the Event is ${bytes} bytes as JSON, more than a request may carry (${this.maxBatchBytes})`,
      );
    }
    state.queue.push({ event: prepared, bytes });
    this.held += 1;
    if (state.queue.length >= this.flushAt) void this.drain(route, state);
    else this.timer ??= setTimeout(() => this.onTimer(), this.flushIntervalMs);
    return prepared.dedupKey;
  }

  /**
   * Sends every queued Event and resolves when each batch was recorded or reported to
   * `onError`. Never rejects.
   */
  async flush(): Promise<void> {
    this.clearTimer();
    const running: Promise<void>[] = [];
    for (const [route, state] of this.routes) {
      if (state.queue.length > 0) state.flushRequested = true;
      const draining = state.queue.length > 0 ? this.drain(route, state) : state.draining;
      if (draining) running.push(draining);
    }
    await Promise.all(running);
  }

  /**
   * Stops taking Events, sends what is queued, and resolves when all of it is done. With
   * `timeoutMs` (a process about to exit), it resolves by then at the latest: the Events still
   * queued are reported to `onError` with a HeraldError `tracker_closed` and dropped, and a batch
   * already on its way finishes on its own, reporting as usual if it fails. Never rejects.
   */
  close(options: { timeoutMs?: number } = {}): Promise<void> {
    const { timeoutMs } = options;
    // setTimeout runs a longer delay at once: a larger timeout would drop every queued Event.
    if (timeoutMs !== undefined && !(timeoutMs >= 0 && timeoutMs <= MAX_TIMER_MS)) {
      throw new RangeError(`timeoutMs must be from 0 to ${MAX_TIMER_MS}`);
    }
    this.closing ??= this.flush();
    if (timeoutMs === undefined) return this.closing;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<'expired'>((resolve) => {
      timer = setTimeout(() => resolve('expired'), timeoutMs);
    });
    return Promise.race([this.closing, expired]).then((outcome) => {
      clearTimeout(timer);
      if (outcome === 'expired') this.dropQueued(timeoutMs);
    });
  }

  /** Reports every queued Event (not yet sent) to `onError` and forgets it. */
  private dropQueued(timeoutMs: number): void {
    for (const [route, state] of this.routes) {
      if (state.queue.length === 0) continue;
      const dropped = state.queue.splice(0).map((queued) => queued.event);
      this.held -= dropped.length;
      this.report(
        new HeraldError(`close() gave up after ${timeoutMs} ms: the Events were not sent`, {
          code: CLIENT_CODES.trackerClosed,
        }),
        dropped,
        route,
      );
    }
  }

  private onTimer(): void {
    this.timer = undefined;
    void this.flush();
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Starts the route's sending loop unless it runs; the loop's promise. */
  private drain(route: EventRoute, state: RouteState): Promise<void> {
    state.draining ??= (async () => {
      try {
        while (
          state.queue.length >= this.flushAt ||
          (state.flushRequested && state.queue.length > 0)
        ) {
          const batch = this.takeBatch(state.queue);
          try {
            await this.sendBatch(route, batch);
          } finally {
            this.held -= batch.length;
          }
        }
      } finally {
        state.flushRequested = false;
        state.draining = undefined;
        // Events queued meanwhile below flushAt wait for the timer.
        if (state.queue.length > 0 && !this.closing) {
          this.timer ??= setTimeout(() => this.onTimer(), this.flushIntervalMs);
        }
      }
    })();
    return state.draining;
  }

  /** The queue's head, at most `flushAt` Events and `maxBatchBytes` bytes as a JSON array. */
  private takeBatch(queue: Queued[]): TrackedEvent[] {
    let count = 0;
    let bytes = 2; // []
    while (count < queue.length && count < this.flushAt) {
      const next = queue[count]!.bytes + (count > 0 ? 1 : 0);
      if (count > 0 && bytes + next > this.maxBatchBytes) break;
      bytes += next;
      count += 1;
    }
    return queue.splice(0, count).map((queued) => queued.event);
  }

  private async sendBatch(route: EventRoute, batch: TrackedEvent[]): Promise<void> {
    try {
      await this.events.record(route, batch, this.requestOptions);
    } catch (error) {
      if (!(error instanceof UnresolvedIdentityError) || error.unresolved.length === 0) {
        this.report(error, batch, route);
        return;
      }
      // Nothing of the batch was recorded: report the Events naming what does not exist, and
      // send the others again (same dedupKeys) rather than lose them.
      const unresolved = new Set(error.unresolved.map((item) => item.index));
      const dropped = batch.filter((_, index) => unresolved.has(index));
      const rest = batch.filter((_, index) => !unresolved.has(index));
      this.report(error, dropped, route);
      if (rest.length === 0) return;
      try {
        await this.events.record(route, rest, this.requestOptions);
      } catch (retryError) {
        this.report(retryError, rest, route);
      }
    }
  }

  private report(error: unknown, events: readonly TrackedEvent[], route: EventRoute): void {
    try {
      this.onError(error instanceof Error ? error : new Error(String(error)), events, route);
    } catch {
      // An onError that throws must not stop the tracker.
    }
  }
}
