// The live view of a Tenant's Events for the operator console: new Events as they are recorded,
// read from PostgreSQL (where an Event is recorded before anything else sees it) every half
// second, at most `maxPerSecond` of them passed on so that a busy Tenant cannot flood a browser.
import { setTimeout as wait } from 'node:timers/promises';
import { databaseNow, type Pool } from '@herald/db';
import { eventsRecordedAfter, type LiveEvent } from './data/live-events-repository.js';

export interface LiveViewSink {
  event(event: LiveEvent): void;
  /** Events recorded but not passed on: over the rate, or (`atLeast`) past a full read. */
  skipped(count: number, atLeast: boolean): void;
  /** Nothing new for a while: a line that keeps proxies from closing the stream. */
  idle(): void;
}

export interface LiveViewOptions {
  pollMs: number;
  maxPerSecond: number;
  /**
   * How far back each read looks again: an Event's received_at is its transaction's time, so
   * one committed late can carry a time already read past. Events seen are not sent twice.
   */
  lookbackMs: number;
  /** The most Events one read takes: the newest. */
  readLimit: number;
  idleMs: number;
}

export const LIVE_VIEW_DEFAULTS: LiveViewOptions = {
  pollMs: 500,
  maxPerSecond: 20,
  lookbackMs: 5_000,
  readLimit: 200,
  idleMs: 15_000,
};

/** Waits `ms`, or less when `signal` aborts; leaves no listener behind either way. */
const sleep = (ms: number, signal: AbortSignal) =>
  wait(ms, undefined, { signal }).catch(() => undefined);

/** Passes the Tenant's new Events to `sink` until `signal` aborts. */
export async function watchLiveEvents(
  pool: Pool,
  tenantId: string,
  sink: LiveViewSink,
  signal: AbortSignal,
  options: LiveViewOptions = LIVE_VIEW_DEFAULTS,
): Promise<void> {
  let watermark = (await databaseNow(pool)).getTime();
  const started = watermark;
  /** Ids sent or skipped, by received_at in ms, kept while inside the lookback. */
  const seen = new Map<string, number>();
  let allowance = options.maxPerSecond;
  let lastRefill = Date.now();
  let lastSent = Date.now();
  while (!signal.aborted) {
    const since = Math.max(started, watermark - options.lookbackMs);
    const events = await eventsRecordedAfter(pool, tenantId, new Date(since), options.readLimit);
    const now = Date.now();
    allowance = Math.min(
      options.maxPerSecond,
      allowance + ((now - lastRefill) / 1000) * options.maxPerSecond,
    );
    lastRefill = now;
    // A full read whose oldest Event is new may have left older new ones unread.
    const full = events.length === options.readLimit && !seen.has(events[0]!.id);
    let skipped = 0;
    for (const event of events) {
      if (seen.has(event.id)) continue;
      const at = event.receivedAt.getTime();
      seen.set(event.id, at);
      watermark = Math.max(watermark, at);
      if (allowance >= 1) {
        allowance -= 1;
        sink.event(event);
        lastSent = now;
      } else skipped += 1;
    }
    if (skipped > 0 || full) sink.skipped(skipped, full);
    for (const [id, at] of seen) if (at < watermark - options.lookbackMs) seen.delete(id);
    if (now - lastSent >= options.idleMs) {
      sink.idle();
      lastSent = now;
    }
    await sleep(options.pollMs, signal);
  }
}
