// The events service, declared once: its processes (the service and its outbox relay) and its
// routes. `npm run generate` derives the OpenAPI document, the local stack's registry, the
// chart's process list and the compose ingress from it; the app mounts its routes from it.
// Light on purpose: scripts import it.
import { z } from 'zod';
import {
  adminUnauthorizedExample,
  defineService,
  errorSchemas,
  insufficientScopeExamples,
  noSuchTenantExample,
  settingsOf,
  unauthenticatedExample,
  uuidParameter,
  type RouteSpec,
} from '@herald/http';
import { contactDataRoutes, SERVICE_PORTS, tenantDataRoutes } from '@herald/internal-api';
import { TOPICS } from '@herald/messages';
import { EVENT_ROUTES, eventFieldName, type EventRoute } from './recording/event-batch.js';
import { acceptedResponse, eventNamesResponse, MAX_EVENTS_PER_REQUEST } from './schemas.js';
import { LIVE_VIEW_DEFAULTS } from './live/live-events.js';
import { MAX_LIVE_VIEWS } from './live/routes.js';
import { configSchema, migrationConfigSchema, RELAY_PORT, relayConfigSchema } from './config.js';
import {
  acceptedExamples,
  eventNamesExample,
  liveEventsExample,
  requestExamples,
  unresolvedExample,
  validationExample,
} from './examples.js';

const { standardError, unresolvedIdentity } = errorSchemas;
const error = (description: string, example?: unknown) => ({
  description,
  schema: standardError,
  ...(example === undefined ? {} : { example }),
});

/** One Event object, or an array of 1..1,000 of them. */
const requestBody = (event: z.ZodType) =>
  z.union([event, z.array(event).min(1).max(MAX_EVENTS_PER_REQUEST)]);

/**
 * The routes that look a Contact or organization up by email or externalId: a publishable key
 * needs identifierLookup for them. by-contact-id names Contacts by Herald's random id, which no
 * stranger can guess; an Event there that names an organization is refused the same way.
 */
const LOOKUP_ROUTES: ReadonlySet<EventRoute> = new Set([
  'by-external-id',
  'by-email',
  'by-organization',
]);

/** One of the four Event routes: one token from the write budget per request. */
function eventRoute<const R extends EventRoute>(route: R, summary: string, names: string) {
  return {
    method: 'post',
    path: `/v1/events/${route}`,
    audience: 'public',
    access: LOOKUP_ROUTES.has(route)
      ? { kind: 'bearer', scope: 'events:write', identifierLookup: true }
      : { kind: 'bearer', scope: 'events:write' },
    summary,
    description: `${names} Send one Event or an array of up to 1,000; the request is all or nothing. Give each Event a \`dedupKey\` and resend a failed or unanswered request with the same keys: an Event is recorded once per key inside the dedup window, and the 202 says so however often it is sent.`,
    requestBody: requestBody(EVENT_ROUTES[route]),
    bodyFieldName: eventFieldName,
    requestExample: requestExamples[route],
    responses: {
      202: {
        description:
          'recorded (committed); `accepted` counts every Event object, duplicates of a dedupKey included',
        schema: acceptedResponse,
        example: acceptedExamples[route],
      },
      400: {
        ...error(
          'validation_error: the message names the first invalid Event and field, `events[3].occurredAt: …` (array) or `event.occurredAt: …` (single object); nothing recorded',
        ),
        example: validationExample,
      },
      401: error('unauthenticated: missing, malformed or expired token', unauthenticatedExample),
      403: error(
        LOOKUP_ROUTES.has(route)
          ? 'insufficient_scope; or forbidden: a publishable key without identifierLookup (always, before anything is looked up), or one used from an Origin it does not allow'
          : 'insufficient_scope; or forbidden: a publishable key without identifierLookup sent an Event naming an organization (before anything is looked up), or the key was used from an Origin it does not allow',
        insufficientScopeExamples['events:write'],
      ),
      413: error('payload_too_large: body over 1 MiB; nothing recorded'),
      422: {
        description:
          'unresolved_identity: one item per Event naming a Contact or organization that does not exist, in request order; nothing recorded',
        schema: unresolvedIdentity,
        example: unresolvedExample,
      },
      503: error(
        'service_unavailable: a dependency is unreachable; nothing recorded; see Retry-After',
      ),
    },
  } as const satisfies RouteSpec;
}

/**
 * The secrets the service gets (from the Secret, never from settings): the operator token, its
 * own token for the services it calls, and who may call its internal routes.
 */
const SECRETS = ['ADMIN_TOKEN', 'SERVICE_TOKEN', 'SERVICE_CALLERS'];

export const manifest = defineService({
  name: 'events',
  processes: [
    {
      name: 'events',
      entry: 'dist/index.js',
      port: SERVICE_PORTS.events,
      metricsPort: 19083,
      database: 'herald_events',
      migrate: 'dist/migrate.js',
      topics: { creates: [TOPICS.eventsRecorded] },
      secrets: SECRETS,
      settings: settingsOf(configSchema, SECRETS),
      calls: {
        auth: 'tenants, JWKS, revocations, Event retention',
        contacts: 'identity resolution',
        billing: 'subscriptions',
      },
      holdsContactData: true,
      // Large arrays keep tens of MiB alive at full load, from each body until its batch commits.
      // A capped old generation collected at twice its live size keeps the process under 256 MiB
      // for a little more collector time; V8's own sizing let garbage take it past 500.
      heap: { semiSpaceMiB: 8, oldSpaceMiB: 160, growingPercent: 100 },
      ingress: [
        { prefix: '/v1/events/' },
        { regex: '^/admin/v1/tenants/[^/]+/(event-names|events/live)/?$' },
      ],
    },
    {
      // The outbox relay, its own process: it publishes what recording committed and consumes the
      // contacts service's topics into the identity projection. It has no migration and no
      // routes, only its probes, and starts once events has migrated.
      name: 'events-relay',
      entry: 'dist/relay/main.js',
      port: RELAY_PORT,
      metricsPort: 19085,
      database: 'herald_events',
      after: ['events'],
      // While recording saturates the CPU, the relay must still publish as fast as Events commit,
      // or the outbox and the publish lag grow without bound; first in line, intake slows instead.
      niceness: -5,
      // Each batch it publishes leaves MiBs of encoded records behind; collected at twice its live
      // size it stays under 256 MiB, where V8's own sizing let garbage take it past 400.
      heap: { semiSpaceMiB: 16, oldSpaceMiB: 192, growingPercent: 100 },
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
      'Each Event names its Contact by `contactId`, the `id` Herald gave it; an id naming no Contact of the Tenant refuses the request (422).',
    ),
    recordByExternalId: eventRoute(
      'by-external-id',
      'Record Events about Contacts named by your own id',
      'Each Event names its Contact by `contactExternalId`; one naming no Contact refuses the request (422): upsert the Contact first.',
    ),
    recordByEmail: eventRoute(
      'by-email',
      'Record Events about Contacts named by email',
      'Each Event names its Contact by `contactEmail`, compared case-insensitively; one naming no Contact refuses the request (422).',
    ),
    recordByOrganization: eventRoute(
      'by-organization',
      'Record Events of organizations (optionally with the acting Contact)',
      'Each Event names an organization by `organizationExternalId`, and may name the Contact who acted by `contactId`; either naming nothing refuses the request (422).',
    ),
    eventNames: {
      method: 'get',
      path: '/admin/v1/tenants/:tenantId/event-names',
      audience: 'operator',
      access: { kind: 'admin' },
      summary: 'The event names recorded in a Tenant (Journey triggers are picked from them)',
      description:
        'Every event name recorded in the Tenant at least once, sorted: the names a Journey can be triggered by.',
      // What the handler takes; anything else names no Tenant and is a 404, never a 400.
      pathParameters: { tenantId: { description: 'the Tenant id', schema: uuidParameter } },
      responses: {
        200: {
          description: 'sorted by name',
          schema: eventNamesResponse,
          example: eventNamesExample,
        },
        401: error('missing or wrong admin token', adminUnauthorizedExample),
        404: error('no such Tenant', noSuchTenantExample),
      },
    },
    liveEvents: {
      method: 'get',
      path: '/admin/v1/tenants/:tenantId/events/live',
      audience: 'operator',
      access: { kind: 'admin' },
      // A stream: it lasts as long as the caller reads it.
      answerDeadline: false,
      summary: "A Tenant's Events as they are recorded (Server-Sent Events)",
      description: `The console's live view: from the moment of the request, each Event recorded in the Tenant as a \`recorded\` message (its id as the message id; \`properties\` is the JSON text as recorded), read from the database every half second. At most ${LIVE_VIEW_DEFAULTS.maxPerSecond} Events a second are sent; a \`skipped\` message counts those left out (\`atLeast\`: more may have been). A comment line every ${LIVE_VIEW_DEFAULTS.idleMs / 1000} s keeps an idle stream open. At most ${MAX_LIVE_VIEWS} views per events process; more answer 503.`,
      pathParameters: { tenantId: { description: 'the Tenant id', schema: uuidParameter } },
      responses: {
        200: {
          description:
            '`text/event-stream` messages `recorded` and `skipped`, until the caller closes it',
          schema: z.string(),
          contentType: 'text/event-stream',
          example: liveEventsExample,
        },
        401: error('missing or wrong admin token', adminUnauthorizedExample),
        404: error('no such Tenant', noSuchTenantExample),
        503: error('service_unavailable: too many live views are open on this process'),
      },
    },
    // The contacts service calls these for a Contact's GDPR export and erasure; they are
    // defined with its client.
    exportContactEvents: contactDataRoutes.exportContactEvents,
    eraseContactEvents: contactDataRoutes.eraseContactEvents,
    // The auth service's call for a Tenant's deletion, defined with its client.
    deleteTenantData: tenantDataRoutes.deleteTenantData,
  },
  prefixes: [
    // Publishable keys call the Event routes from browsers: CORS on every answer, errors included.
    { prefix: '/v1/events', cors: true },
    { prefix: '/internal', access: 'service' },
  ],
});

/**
 * What each of its commands reads, by the process (or `<service> migration`) that runs it:
 * `npm run generate` writes the README's settings table from these.
 */
export const configSchemas = {
  events: configSchema,
  'events-relay': relayConfigSchema,
  'events migration': migrationConfigSchema,
};
