// The API's request and answer shapes, all taken from the generated OpenAPI types
// (src/generated/openapi.ts): nothing here restates a field. The one exception is the export's
// Event line, which the OpenAPI document describes only as text (see ExportedEvent).
import type { paths } from './generated/openapi.js';

type JsonOf<T> = T extends { content: { 'application/json': infer Body } } ? Body : never;

/** `POST /v1/token` 200. */
export type TokenAnswer = JsonOf<paths['/v1/token']['post']['responses'][200]>;

/** A Contact as every Contact answer carries it. */
export type Contact = JsonOf<paths['/v1/contacts/{externalId}']['get']['responses'][200]>;

/** The body of `PUT /v1/contacts/{externalId}`: `email` required; `null` clears a field. */
export type ContactFields = JsonOf<paths['/v1/contacts/{externalId}']['put']['requestBody']>;

/** The body of `POST /v1/contacts` (upsert by email). */
export type ContactByEmailFields = JsonOf<paths['/v1/contacts']['post']['requestBody']>;

/** The four Event routes, each a separate endpoint `POST /v1/events/<route>`. */
export const EVENT_ROUTES = [
  'by-contact-id',
  'by-external-id',
  'by-email',
  'by-organization',
] as const;
export type EventRoute = (typeof EVENT_ROUTES)[number];

type EventOperation<R extends EventRoute> = paths[`/v1/events/${R}`]['post'];

/** One Event for the route: its body is one such object or an array of 1 to 1,000. */
export type EventOf<R extends EventRoute> = Exclude<
  JsonOf<EventOperation<R>['requestBody']>,
  readonly unknown[]
>;

export type ContactIdEvent = EventOf<'by-contact-id'>;
export type ExternalIdEvent = EventOf<'by-external-id'>;
export type EmailEvent = EventOf<'by-email'>;
export type OrganizationEvent = EventOf<'by-organization'>;

/** 202: `accepted` counts every Event object of the request, duplicates of a dedupKey included. */
export type EventsAccepted = JsonOf<EventOperation<EventRoute>['responses'][202]>;

/** The 422's body. */
export type UnresolvedIdentityBody = JsonOf<EventOperation<EventRoute>['responses'][422]>;
/** One Event of a 422 that names a Contact or organization that does not exist. */
export type UnresolvedItem = UnresolvedIdentityBody['unresolved'][number];

/** Every error answer's body but the 402's: `{code, message}`. */
export type ErrorBody = JsonOf<EventOperation<EventRoute>['responses'][400]>;

/** The 402's body (`application/problem+json`). */
export type SuspendedProblem =
  EventOperation<EventRoute>['responses'][402]['content']['application/problem+json'];

/**
 * An Event line of a Contact's export. The OpenAPI document types the export only as
 * `application/x-ndjson` text, so this one shape is written here, from docs/api-reference.md
 * ("Export and erasure"); the Contact line reuses the generated Contact.
 */
export interface ExportedEvent {
  id: string;
  eventName: string;
  /** RFC 3339, UTC, milliseconds. */
  occurredAt: string;
  /** When Herald recorded the Event. */
  receivedAt: string;
  organizationExternalId: string | null;
  dedupKey: string | null;
  properties: Record<string, unknown> | null;
}

/** One line of `GET …/export`: the Contact first, then one line per Event about it. */
export type ExportLine =
  { type: 'contact'; data: Contact } | { type: 'event'; data: ExportedEvent };
