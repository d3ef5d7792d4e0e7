import type { EventOf, EventRoute } from './types.js';

/** An Event for `route`; `occurredAt` may be a Date (sent as RFC 3339 in UTC). */
export type EventInput<R extends EventRoute> = Omit<EventOf<R>, 'occurredAt'> & {
  occurredAt: string | Date;
};

/** An Event as sent: `occurredAt` a string, and a dedupKey always. */
export type PreparedEvent<R extends EventRoute = EventRoute> = EventOf<R> & { dedupKey: string };

/**
 * `occurredAt` as the API wants it, and a dedupKey (a random UUID) on an Event that has none.
 * A copy: the caller's object is left as it was.
 */
export function prepareEvent<R extends EventRoute>(
  event: EventInput<R> | EventOf<R>,
): PreparedEvent<R> {
  const occurredAt =
    event.occurredAt instanceof Date ? event.occurredAt.toISOString() : event.occurredAt;
  const dedupKey = event.dedupKey ?? crypto.randomUUID();
  return { ...event, occurredAt, dedupKey } as PreparedEvent<R>;
}
