// The auth service, declared once: its process and its routes. `npm run generate` derives the
// OpenAPI document, the local stack's registry, the chart's process list and the compose
// ingress from it; the app mounts its routes from it. Light on purpose: scripts import it.
import {
  adminUnauthorizedExample,
  defineService,
  errorSchemas,
  noSuchTenantExample,
  optionalQueryParameters,
  settingsOf,
  uuidParameter,
} from '@herald/http';
import {
  apiKeyListResponse,
  apiKeyResponse,
  createApiKeyBody,
  createTenantBody,
  listTenantsQuery,
  tenantListResponse,
  eventRetentionResponse,
  setEventRetentionBody,
  tenantDeletionResponse,
  tenantResponse,
  tokenResponse,
} from './schemas.js';
import { authRoutes, SERVICE_PORTS } from '@herald/internal-api';
import { TOPICS } from '@herald/messages';
import { configSchema, migrationConfigSchema } from './config.js';
import { z } from 'zod';
import { CLIENT_ID } from './domain/credentials.js';
import { EVENT_RETENTION_DAYS } from './domain/event-retention.js';
import {
  apiKeyExample,
  apiKeyListExample,
  apiKeyInvalidExample,
  apiKeyWriteExample,
  eventRetentionExample,
  eventRetentionInvalidExample,
  eventRetentionWriteExample,
  exchangeRefusedExample,
  invalidClientExample,
  noSuchApiKeyExample,
  tenantDeletionExample,
  tenantDeletionMismatchExample,
  tenantDeletionUnconfirmedExample,
  tenantExample,
  tenantInvalidExample,
  tenantListExample,
  tenantListInvalidExample,
  tenantWriteExample,
  tokenExample,
} from './examples.js';

const { standardError } = errorSchemas;
const openApiDocumentSchema = z.looseObject({
  openapi: z.string(),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.unknown()),
});
/** What the rendered reference serves: read by anyone, not in the OpenAPI document. */
const page = { method: 'get', audience: 'public', access: { kind: 'none' }, page: true } as const;
/** The operator console's files: open to anyone who reaches the operator ingress, like the
 * page's code; what it shows comes from the operator API, with the admin token. */
const consolePage = { ...page, audience: 'operator' } as const;
const unauthorizedAdmin = {
  description: 'missing or wrong admin token',
  schema: standardError,
  example: adminUnauthorizedExample,
};
const noSuchTenant = {
  description: 'no such Tenant',
  schema: standardError,
  example: noSuchTenantExample,
};
// What the handlers take; anything else names nothing and is a 404, never a 400.
const tenantId = { tenantId: { description: 'the Tenant id', schema: uuidParameter } };
const clientId = {
  clientId: { description: 'the key ClientID', schema: z.string().regex(CLIENT_ID) },
};

/**
 * The secrets the service gets (from the Secret, never from settings): the operator token, its
 * own token for the services it calls (a Tenant's deletion), who may call its internal routes
 * and its keys.
 */
const SECRETS = ['ADMIN_TOKEN', 'SERVICE_TOKEN', 'SERVICE_CALLERS', 'AUTH_SIGNING_KEYS'];

export const manifest = defineService({
  name: 'auth',
  processes: [
    {
      name: 'auth',
      entry: 'dist/index.js',
      port: SERVICE_PORTS.auth,
      metricsPort: 19081,
      database: 'herald_auth',
      migrate: 'dist/migrate.js',
      // A Tenant's deletion is announced through its outbox; the relay runs inside it.
      topics: { creates: [TOPICS.tenantsDeleted], produces: [TOPICS.tenantsDeleted] },
      secrets: SECRETS,
      settings: settingsOf(configSchema, SECRETS),
      calls: {
        contacts: "a deleted Tenant's data",
        events: "a deleted Tenant's data",
        billing: "a deleted Tenant's data",
      },
      ingress: [
        { exact: '/v1/token' },
        { exact: '/v1/openapi.json', note: 'the OpenAPI document' },
        { prefix: '/docs', note: 'the rendered API reference and its files' },
        // the operator console: on the operator ingress only, beside the API it calls
        { regex: '^/console(/.*)?$', note: 'the operator console and its files' },
        {
          regex: '^/admin/v1/tenants(/[^/]+(/(api-keys(/.*)?|event-retention))?)?/?$',
          note: 'tenant create and delete, API key create, API key revoke, Event retention',
        },
      ],
    },
  ],
  routes: {
    // Its routes for the other services are defined with the clients that call them.
    jwks: authRoutes.jwks,
    // The API's own description, served by the service that is the API's front door.
    openApiDocument: {
      method: 'get',
      path: '/v1/openapi.json',
      audience: 'public',
      access: { kind: 'none' },
      summary: 'This OpenAPI document',
      description:
        'The contract of the public and operator API as OpenAPI 3.1, generated from the schemas the services validate with. Cacheable (ETag, five minutes) and readable from browsers (CORS).',
      responses: {
        200: { description: 'the document', schema: openApiDocumentSchema },
        304: { description: 'not modified since the ETag in If-None-Match' },
      },
    },
    referencePage: { ...page, path: '/docs', summary: 'The rendered API reference' },
    consolePage: { ...consolePage, path: '/console', summary: 'The operator console' },
    consoleAsset: {
      ...consolePage,
      path: '/console/assets/:name',
      summary: "The console's scripts and styles",
    },
    referenceAsset: {
      ...page,
      path: '/docs/assets/:name',
      summary: "The reference page's scripts and styles",
    },
    exchangeToken: {
      method: 'post',
      path: '/v1/token',
      audience: 'public',
      access: { kind: 'basic' },
      summary: 'Exchange an API key for an access token',
      description:
        "Send the key's ClientID and secret as HTTP Basic credentials (a publishable key: an empty password); the answer is a bearer token valid 900 seconds with the key's scopes. Exchange again before it expires. Failed exchanges from one address or for one ClientID are limited (429 with Retry-After).",
      responses: {
        200: {
          description: 'an access token, valid 900 seconds',
          schema: tokenResponse,
          example: tokenExample,
        },
        401: {
          description: 'invalid_client: wrong ClientID or secret, or revoked key',
          schema: standardError,
          example: invalidClientExample,
        },
        429: {
          description:
            'rate_limited: too many failed exchanges for this ClientID or from this address; Retry-After says when to try again',
          schema: standardError,
          example: exchangeRefusedExample,
        },
      },
    },
    createTenant: {
      method: 'post',
      path: '/admin/v1/tenants',
      audience: 'operator',
      access: { kind: 'admin' },
      summary: 'Create a Tenant',
      description:
        'Creates a Tenant: the customer account every Contact, Event and key belongs to. Its id names it in every other operator route.',
      requestBody: createTenantBody,
      requestExample: tenantWriteExample,
      responses: {
        201: { description: 'created', schema: tenantResponse, example: tenantExample },
        400: {
          description: 'validation_error',
          schema: standardError,
          example: tenantInvalidExample,
        },
        401: unauthorizedAdmin,
      },
    },
    listTenants: {
      method: 'get',
      path: '/admin/v1/tenants',
      audience: 'operator',
      access: { kind: 'admin' },
      summary: 'List Tenants',
      description:
        'The Tenants, newest first, a page at a time: `nextCursor` of one page, sent as `cursor`, gives the next. `search` keeps those whose name holds it (any case) or whose id it is. A Tenant being deleted is not listed.',
      queryParameters: optionalQueryParameters(listTenantsQuery.shape),
      responses: {
        200: {
          description: 'a page of Tenants',
          schema: tenantListResponse,
          example: tenantListExample,
        },
        400: {
          description:
            'validation_error: a `limit` out of range, or a `cursor` this list did not give',
          schema: standardError,
          example: tenantListInvalidExample,
        },
        401: unauthorizedAdmin,
      },
    },
    getTenant: {
      method: 'get',
      path: '/admin/v1/tenants/:tenantId',
      audience: 'operator',
      access: { kind: 'admin' },
      summary: 'A Tenant',
      description:
        'The Tenant: its id, name and when it was created. A Tenant being deleted is a 404.',
      pathParameters: tenantId,
      responses: {
        200: { description: 'the Tenant', schema: tenantResponse, example: tenantExample },
        401: unauthorizedAdmin,
        404: noSuchTenant,
      },
    },
    deleteTenant: {
      method: 'delete',
      path: '/admin/v1/tenants/:tenantId',
      audience: 'operator',
      access: { kind: 'admin' },
      summary: 'Delete a Tenant and everything it holds, permanently',
      description:
        "Deletes the Tenant: its keys stop working at once (exchanges fail, tokens already issued are refused within 5 seconds), then every Contact, Event, organization, event name and subscription of it is deleted from every service, and `tenant.deleted` is published on `herald.tenants.deleted`. Nothing of it is kept. `confirm` must repeat the Tenant's id; without it nothing is done. The answer comes at once (202) while the deletion goes on; sending the same request again continues one that was interrupted and answers 202 until the deletion is done, then 404. Meanwhile every other operator route answers 404 for the Tenant.",
      pathParameters: tenantId,
      queryParameters: {
        confirm: {
          description:
            "the Tenant's id again, as in the path: the typed confirmation that this Tenant is to be deleted",
          schema: z.uuid(),
          required: true,
        },
      },
      responses: {
        202: {
          description:
            'its keys are revoked and its data is being deleted; the Tenant is a 404 once all is gone',
          schema: tenantDeletionResponse,
          example: tenantDeletionExample,
        },
        400: {
          description: 'validation_error: `confirm` is missing or no Tenant id; nothing was done',
          schema: standardError,
          example: tenantDeletionUnconfirmedExample,
        },
        401: unauthorizedAdmin,
        404: noSuchTenant,
        409: {
          description:
            'conflict: `confirm` is not the Tenant id of the path (another Tenant, or a typo); nothing was done',
          schema: standardError,
          example: tenantDeletionMismatchExample,
        },
      },
    },
    createApiKey: {
      method: 'post',
      path: '/admin/v1/tenants/:tenantId/api-keys',
      audience: 'operator',
      access: { kind: 'admin' },
      summary: 'Create an API key (secret or publishable)',
      description:
        'Creates a key with the scopes given. The secret of a secret key is in this answer only: store it now. A publishable key (`pk_`) has no secret and only `events:write`: it is for browser code.',
      pathParameters: tenantId,
      requestBody: createApiKeyBody,
      requestExample: apiKeyWriteExample,
      responses: {
        201: {
          description: 'created; a secret is shown only here',
          schema: apiKeyResponse,
          example: apiKeyExample,
        },
        400: {
          description: 'validation_error',
          schema: standardError,
          example: apiKeyInvalidExample,
        },
        401: unauthorizedAdmin,
        404: noSuchTenant,
      },
    },
    listApiKeys: {
      method: 'get',
      path: '/admin/v1/tenants/:tenantId/api-keys',
      audience: 'operator',
      access: { kind: 'admin' },
      summary: "A Tenant's API keys",
      description:
        'Every key of the Tenant, revoked ones included (with `revokedAt`), newest first. Secrets are never shown again: only their hash is kept. When a key was last used is not recorded.',
      pathParameters: tenantId,
      responses: {
        200: { description: 'its keys', schema: apiKeyListResponse, example: apiKeyListExample },
        401: unauthorizedAdmin,
        404: noSuchTenant,
      },
    },
    revokeApiKey: {
      method: 'post',
      path: '/admin/v1/tenants/:tenantId/api-keys/:clientId/revoke',
      audience: 'operator',
      access: { kind: 'admin' },
      summary: 'Revoke an API key',
      description:
        'Revokes the key: new exchanges with it fail at once, and access tokens already issued with it stop working within 5 seconds. Revoking again answers 204 too.',
      pathParameters: { ...tenantId, ...clientId },
      responses: {
        204: { description: 'revoked (again: still 204)' },
        401: unauthorizedAdmin,
        404: {
          description: 'no such key in this Tenant',
          schema: standardError,
          example: noSuchApiKeyExample,
        },
      },
    },
    tenantEventRetention: {
      method: 'get',
      path: '/admin/v1/tenants/:tenantId/event-retention',
      audience: 'operator',
      access: { kind: 'admin' },
      summary: "A Tenant's Event retention",
      description: `How long the Tenant's Events are kept, in days from when Herald recorded them (\`receivedAt\`): the Tenant's own period, or the installation's default (\`EVENT_RETENTION_DAYS_DEFAULT\`, ${EVENT_RETENTION_DAYS.default} days unless set).`,
      pathParameters: tenantId,
      responses: {
        200: {
          description: "the Tenant's retention",
          schema: eventRetentionResponse,
          example: eventRetentionExample,
        },
        401: unauthorizedAdmin,
        404: noSuchTenant,
      },
    },
    setTenantEventRetention: {
      method: 'put',
      path: '/admin/v1/tenants/:tenantId/event-retention',
      audience: 'operator',
      access: { kind: 'admin' },
      summary: "Set a Tenant's Event retention",
      description: `Sets how long the Tenant's Events are kept, ${EVENT_RETENTION_DAYS.min} to ${EVENT_RETENTION_DAYS.max} days, or with \`null\` lets the installation's default apply again (and follow it when it changes). Shortening it deletes the Events older than the new period at the events service's next sweep, for good; they also leave Contact exports. Lengthening it brings back nothing already deleted.`,
      pathParameters: tenantId,
      requestBody: setEventRetentionBody,
      requestExample: eventRetentionWriteExample,
      responses: {
        200: {
          description: 'set; the retention now in force',
          schema: eventRetentionResponse,
          example: eventRetentionExample,
        },
        400: {
          description: `validation_error: \`days\` is not a whole number from ${EVENT_RETENTION_DAYS.min} to ${EVENT_RETENTION_DAYS.max}, nor null`,
          schema: standardError,
          example: eventRetentionInvalidExample,
        },
        401: unauthorizedAdmin,
        404: noSuchTenant,
      },
    },
    tenantExists: authRoutes.tenantExists,
    revokedKeys: authRoutes.revokedKeys,
    eventRetentionOverview: authRoutes.eventRetentionOverview,
  },
  prefixes: [
    // Browser code exchanges publishable keys here: CORS on every answer.
    { prefix: '/v1/token', cors: true },
    { prefix: '/v1/openapi.json', cors: true },
    // Every path under it asks for the admin token first, unknown ones included.
    { prefix: '/admin/v1', access: 'admin' },
    { prefix: '/internal', access: 'service' },
  ],
});

/**
 * What each of its commands reads, by the process (or `<service> migration`) that runs it:
 * `npm run generate` writes the README's settings table from these.
 */
export const configSchemas = { auth: configSchema, 'auth migration': migrationConfigSchema };
