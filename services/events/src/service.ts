// The events service, declared once: its processes (the service and its outbox relay) and its
// routes. `npm run generate` derives the OpenAPI document, the local stack's registry, the
// chart's process list and the compose ingress from it; the app mounts its routes from it.
// Light on purpose: scripts import it.
import { z } from 'zod';
import { defineService, errorSchemas, settingsOf, type RouteSpec } from '@herald/http';
import { TOPICS } from '@herald/messages';
import { EVENT_ROUTES, type EventRoute } from './domain/event-batch.js';
import { acceptedResponse, eventNamesResponse, MAX_EVENTS_PER_REQUEST } from './schemas.js';
import { configSchema, relayConfigSchema } from './config.js';

const { standardError, unresolvedIdentity } = errorSchemas;
const error = (description: string) => ({ description, schema: standardError });

/** One Event object, or an array of 1..1,000 of them. */
const requestBody = (event: z.ZodType) =>
  z.union([event, z.array(event).min(1).max(MAX_EVENTS_PER_REQUEST)]);

/** One of the four Event routes: one token from the write budget per request. */
function eventRoute<const R extends EventRoute>(route: R, summary: string) {
  return {
    method: 'post',
    path: `/v1/events/${route}`,
    audience: 'public',
    access: { kind: 'bearer', scope: 'events:write' },
    summary,
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
  } as const satisfies RouteSpec;
}

const contactPath = {
  tenantId: { description: 'the Tenant id' },
  contactId: { description: 'the Contact id' },
};

/** The shared secrets the service gets (from the Secret, never from settings). */
const SECRETS = ['ADMIN_TOKEN', 'SERVICE_TOKEN'];

export const manifest = defineService({
  name: 'events',
  processes: [
    {
      name: 'events',
      entry: 'dist/index.js',
      port: 18083,
      database: 'herald_events',
      migrate: 'dist/migrate.js',
      nodeArgs: ['--import', '@herald/telemetry/register'],
      topics: { creates: [TOPICS.eventsRecorded] },
      secrets: SECRETS,
      settings: settingsOf(configSchema, SECRETS),
      calls: {
        auth: 'tenants, JWKS, revocations',
        contacts: 'identity resolution',
        billing: 'subscriptions',
      },
      holdsContactData: true,
      ingress: [{ prefix: '/v1/events/' }, { regex: '^/admin/v1/tenants/[^/]+/event-names/?$' }],
    },
    {
      // The outbox relay, its own process: it publishes what recording committed and consumes the
      // contacts service's topics into the identity projection. It has no migration and no
      // routes, only its probes, and starts once events has migrated.
      name: 'events-relay',
      entry: 'dist/relay/main.js',
      port: 18085,
      database: 'herald_events',
      after: ['events'],
      nodeArgs: ['--import', '@herald/telemetry/register'],
      // It also feeds the contact identity projection (docs/events.md#identity-resolution).
      topics: {
        produces: [TOPICS.eventsRecorded],
        consumes: [TOPICS.contactsChanged, TOPICS.contactsErased],
      },
      secrets: [],
      settings: settingsOf(relayConfigSchema, []),
      calls: {},
    },
  ],
  routes: {
    recordByContactId: eventRoute(
      'by-contact-id',
      'Record Events about Contacts named by their Herald id',
    ),
    recordByExternalId: eventRoute(
      'by-external-id',
      'Record Events about Contacts named by your own id',
    ),
    recordByEmail: eventRoute('by-email', 'Record Events about Contacts named by email'),
    recordByOrganization: eventRoute(
      'by-organization',
      'Record Events of organizations (optionally with the acting Contact)',
    ),
    eventNames: {
      method: 'get',
      path: '/admin/v1/tenants/:tenantId/event-names',
      audience: 'operator',
      access: { kind: 'admin' },
      summary: 'The event names recorded in a Tenant (Journey triggers are picked from them)',
      pathParameters: { tenantId: { description: 'the Tenant id', schema: z.uuid() } },
      responses: {
        200: { description: 'sorted by name', schema: eventNamesResponse },
        401: error('missing or wrong admin token'),
        404: error('no such Tenant'),
      },
    },
    // The contacts service calls these for a Contact's GDPR export and erasure.
    exportContactEvents: {
      method: 'get',
      path: '/internal/v1/tenants/:tenantId/contacts/:contactId/export',
      audience: 'internal',
      access: { kind: 'service' },
      summary: "A Contact's Events as JSON Lines",
      pathParameters: contactPath,
    },
    eraseContactEvents: {
      method: 'post',
      path: '/internal/v1/tenants/:tenantId/contacts/:contactId/erase',
      audience: 'internal',
      access: { kind: 'service' },
      summary: "Erase a Contact's Events",
      pathParameters: contactPath,
    },
  },
  prefixes: [
    // Publishable keys call the Event routes from browsers: CORS on every answer, errors included.
    { prefix: '/v1/events', cors: true },
    { prefix: '/internal', access: 'service' },
  ],
});
