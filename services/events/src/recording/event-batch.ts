import { z } from 'zod';
import { errors } from '@herald/errors';
import { formatPath } from '@herald/http';
import {
  byContactIdEvent,
  byEmailEvent,
  byExternalIdEvent,
  byOrganizationEvent,
  MAX_EVENTS_PER_REQUEST,
  propertiesAsSent,
} from '../schemas.js';

/**
 * The four Event routes and the schema of each one's Event. Each route reads only its
 * own identity field: the schemas strip the other routes' fields.
 */
export const EVENT_ROUTES = {
  'by-contact-id': byContactIdEvent,
  'by-external-id': byExternalIdEvent,
  'by-email': byEmailEvent,
  'by-organization': byOrganizationEvent,
} as const;

export type EventRoute = keyof typeof EVENT_ROUTES;

/** An Event as any route parsed it: only the parsing route's identity fields are present. */
export interface EventInput {
  eventName: string;
  occurredAt: string;
  dedupKey?: string | undefined;
  properties?: Record<string, unknown> | undefined;
  organizationExternalId?: string | undefined;
  contactId?: string | undefined;
  contactExternalId?: string | undefined;
  contactEmail?: string | undefined;
}

const propertiesAsSentOfEvent = z.object({ properties: propertiesAsSent });

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** The 400 for the first invalid field of one Event: `events[3].occurredAt: ...`. */
function invalidEvent(where: string, input: unknown, error: z.ZodError): never {
  const issue = error.issues[0]!;
  const missing = issue.code === 'invalid_type' && valueAt(input, issue.path) === undefined;
  const field = issue.path.length > 0 ? `${where}.${formatPath(issue.path)}` : where;
  throw errors.validation(`${field}: ${missing ? 'is required' : issue.message}`, error);
}

function parseEvent(route: EventRoute, input: unknown, where: string): EventInput {
  if (!isObject(input)) throw errors.validation(`${where}: must be an Event object`);
  const result = EVENT_ROUTES[route].safeParse(input);
  if (!result.success) invalidEvent(where, input, result.error);
  // The properties object exactly as parsed from the body is what is stored: zod's copy drops a
  // top-level key `__proto__`, which JSON allows, and holds the body's own values under every
  // other key. Only with such a key is what was sent checked against the limits again.
  if (result.data.properties !== undefined) {
    const sent = input.properties as Record<string, unknown>;
    if (Object.hasOwn(sent, '__proto__')) {
      const asSent = propertiesAsSentOfEvent.safeParse({ properties: sent });
      if (!asSent.success) invalidEvent(where, input, asSent.error);
    }
    result.data.properties = sent;
  }
  return result.data;
}

/**
 * How a 400 names a place in an Event route's body, from its path: `events[3].properties` in an
 * array, `event.properties` in a single object, as the messages of parseEventBatch do.
 */
export function eventFieldName(path: readonly PropertyKey[]): string {
  if (path.length === 0) return 'body';
  return typeof path[0] === 'number' ? `events${formatPath(path)}` : `event.${formatPath(path)}`;
}

/**
 * Parses a request body: one Event object, or an array of 1..1,000 of them. A 400's message
 * names the first invalid Event and its first invalid field: `event.occurredAt: ...` for a single
 * object, `events[3].occurredAt: ...` for an array (the index is the Event's position in it),
 * `events: ...` for the array itself and `body: ...` for a body that is neither.
 */
export function parseEventBatch(route: EventRoute, body: unknown): EventInput[] {
  if (Array.isArray(body)) {
    if (body.length === 0 || body.length > MAX_EVENTS_PER_REQUEST) {
      throw errors.validation(
        `events: must hold 1 to ${MAX_EVENTS_PER_REQUEST} Event objects; got ${body.length}`,
      );
    }
    return body.map((item, index) => parseEvent(route, item, `events[${index}]`));
  }
  if (isObject(body)) return [parseEvent(route, body, 'event')];
  throw errors.validation(
    `body: must be an Event object or an array of 1 to ${MAX_EVENTS_PER_REQUEST} Event objects`,
  );
}
