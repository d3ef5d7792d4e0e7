import { z } from 'zod';
import { errorSchemas, type ApiOperation } from '@herald/http';
import { EVENT_ROUTES, type EventRoute } from './domain/event-batch.js';
import { acceptedResponse, eventNamesResponse, MAX_EVENTS_PER_REQUEST } from './schemas.js';

const { standardError, unresolvedIdentity } = errorSchemas;
const error = (description: string) => ({ description, schema: standardError });

const SUMMARIES: Record<EventRoute, string> = {
  'by-contact-id': 'Record Events about Contacts named by their Herald id',
  'by-external-id': 'Record Events about Contacts named by your own id',
  'by-email': 'Record Events about Contacts named by email',
  'by-organization': 'Record Events of organizations (optionally with the acting Contact)',
};

/** One Event object, or an array of 1..1,000 of them. */
const requestBody = (event: z.ZodType) =>
  z.union([event, z.array(event).min(1).max(MAX_EVENTS_PER_REQUEST)]);

function eventOperation(route: EventRoute): ApiOperation {
  return {
    method: 'post',
    path: `/v1/events/${route}`,
    summary: SUMMARIES[route],
    tag: 'Public API',
    auth: { kind: 'bearer', scope: 'events:write' },
    requestBody: requestBody(EVENT_ROUTES[route]),
    responses: {
      202: {
        description:
          'recorded (committed); `accepted` counts every Event object, duplicates of a dedupKey included',
        schema: acceptedResponse,
      },
      400: error(
        'validation_error: the message names the first invalid Event and field, `events[3].occurredAt: …` (array) or `event.occurredAt: …` (single object); nothing recorded',
      ),
      401: error('unauthenticated: missing, malformed or expired token'),
      403: error('insufficient_scope'),
      413: error('payload_too_large: body over 1 MiB; nothing recorded'),
      422: {
        description:
          'unresolved_identity: one item per Event naming a Contact or organization that does not exist, in request order; nothing recorded',
        schema: unresolvedIdentity,
      },
      503: error(
        'service_unavailable: a dependency is unreachable; nothing recorded; see Retry-After',
      ),
    },
  };
}

/** The events service's part of the OpenAPI document (scripts/openapi.mjs assembles it). */
export const operations: ApiOperation[] = [
  ...(Object.keys(EVENT_ROUTES) as EventRoute[]).map(eventOperation),
  {
    method: 'get',
    path: '/admin/v1/tenants/{tenantId}/event-names',
    summary: 'The event names recorded in a Tenant (Journey triggers are picked from them)',
    tag: 'Operator API',
    auth: { kind: 'admin' },
    pathParameters: { tenantId: { description: 'the Tenant id', schema: z.uuid() } },
    responses: {
      200: { description: 'sorted by name', schema: eventNamesResponse },
      401: error('missing or wrong admin token'),
      404: error('no such Tenant'),
    },
  },
];
