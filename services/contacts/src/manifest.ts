// The contacts service, declared once: its process and its routes. `npm run generate` derives
// the OpenAPI document, the local stack's registry, the chart's process list and the compose
// ingress from it; the app mounts its routes from it. Light on purpose: scripts import it.
import { z } from 'zod';
import {
  adminUnauthorizedExample,
  defineService,
  errorSchemas,
  insufficientScopeExamples,
  noSuchTenantExample,
  optionalQueryParameters,
  settingsOf,
  unauthenticatedExample,
  uuidParameter,
  type RouteSpec,
} from '@herald/http';
import { contactsRoutes, SERVICE_PORTS, tenantDataRoutes } from '@herald/internal-api';
import { TOPICS } from '@herald/messages';
import {
  contactResponse,
  contactSearchQuery,
  contactSearchResponse,
  contactWriteBody,
  externalId,
  listOrganizationsQuery,
  organizationBody,
  organizationListResponse,
  organizationResponse,
} from './schemas.js';
import { configSchema, migrationConfigSchema } from './config.js';
import {
  contactByEmailExample,
  contactByEmailInvalidExample,
  contactByEmailUpdatedExample,
  contactByEmailWriteExample,
  contactCreatedExample,
  contactExample,
  contactExportExample,
  contactInvalidExample,
  contactWriteExample,
  emailTakenExample,
  noSuchContactExample,
  organizationExample,
  organizationInvalidExample,
  organizationListExample,
  organizationTakenExample,
  organizationWriteExample,
} from './examples.js';

const { standardError } = errorSchemas;
const error = (description: string, example?: unknown) => ({
  description,
  schema: standardError,
  ...(example === undefined ? {} : { example }),
});
const byExternalId = {
  externalId: { description: "the caller's id, percent-encoded (`/` as %2F)", schema: externalId },
};
const byId = { id: { description: 'the Contact id assigned by Herald', schema: z.uuid() } };
/** The policy guard's refusals, for a route that needs `scope`. */
const common = (scope: keyof typeof insufficientScopeExamples) => ({
  401: error('unauthenticated: missing, malformed or expired token', unauthenticatedExample),
  403: error('insufficient_scope', insufficientScopeExamples[scope]),
});
const noSuchContact = error('not_found', noSuchContactExample);

/** The operator's routes about one Tenant: the admin token, the Tenant in the path. */
const operator = {
  audience: 'operator',
  access: { kind: 'admin' },
  // What the handler takes; anything else names no Tenant and is a 404, never a 400.
  pathParameters: { tenantId: { description: 'the Tenant id', schema: uuidParameter } },
} as const;
const operatorRefusals = {
  401: error('missing or wrong admin token', adminUnauthorizedExample),
  404: error('no such Tenant, or no such Contact of it', noSuchTenantExample),
};
const operatorContact = {
  ...operator.pathParameters,
  contactId: { description: 'the Contact id assigned by Herald', schema: z.uuid() },
};

const read = {
  method: 'get',
  audience: 'public',
  access: { kind: 'bearer', scope: 'contacts:read' },
  summary: 'Read a Contact',
  description:
    'The Contact with its identities (`externalId`, `email`), its attributes and when it was created and last updated. A Contact erased or never created is a 404.',
  responses: {
    200: { description: 'the Contact', schema: contactResponse, example: contactExample },
    ...common('contacts:read'),
    404: noSuchContact,
  },
} as const satisfies Omit<RouteSpec, 'path'>;

const exportContact = {
  method: 'get',
  audience: 'public',
  access: { kind: 'bearer', scope: 'contacts:export' },
  // It gathers from every service before its first line, for as long as a large Contact takes.
  answerDeadline: false,
  summary: 'Export everything held about a Contact (GDPR access), as JSON Lines',
  description:
    'Streams every piece of data Herald holds about the Contact: the Contact first, then each of its Events, one JSON object per line. Read the stream to its end; a stream cut short by a failure ends without its last lines, so compare the Event count with what you expect or export again.',
  responses: {
    200: {
      description:
        'line 1 `{"type":"contact","data":{…}}`, then one `{"type":"event","data":{…}}` per Event',
      schema: z.string(),
      contentType: 'application/x-ndjson',
      example: contactExportExample,
    },
    ...common('contacts:export'),
    404: noSuchContact,
    503: error("service_unavailable: a service holding the Contact's data is unreachable"),
  },
} as const satisfies Omit<RouteSpec, 'path'>;

// Erasure keeps working while the subscription is suspended.
const erase = {
  method: 'post',
  audience: 'public',
  access: { kind: 'bearer', scope: 'contacts:erase' },
  answerDeadline: false,
  allowedWhileSuspended: true,
  summary: 'Erase a Contact and everything about it (GDPR erasure), permanently',
  description:
    'Erases the Contact and its Events everywhere Herald keeps them, permanently; Events sent about it afterwards are refused (422). Works while the subscription is suspended. Resending after a timeout is safe.',
  responses: {
    204: { description: 'erased (by id: again 204 on retry)' },
    ...common('contacts:erase'),
    404: noSuchContact,
  },
} as const satisfies Omit<RouteSpec, 'path'>;

/** What a client can do next with an upserted Contact (OpenAPI links). */
const linksTo = (suffix: '' | 'ById', parameter: string, value: string) => ({
  [`read${suffix}`]: { operationId: `getContact${suffix}`, parameters: { [parameter]: value } },
  [`export${suffix}`]: {
    operationId: `exportContact${suffix}`,
    parameters: { [parameter]: value },
  },
  [`erase${suffix}`]: { operationId: `eraseContact${suffix}`, parameters: { [parameter]: value } },
});
const linksById = linksTo('ById', 'id', '$response.body#/id');
const linksByExternalId = {
  ...linksTo('', 'externalId', '$request.path.externalId'),
  ...linksTo('ById', 'id', '$response.body#/id'),
};

/**
 * The secrets the service gets (from the Secret, never from settings): the operator token, its
 * own token for the services it calls, and who may call its internal route.
 */
const SECRETS = ['ADMIN_TOKEN', 'SERVICE_TOKEN', 'SERVICE_CALLERS'];

export const manifest = defineService({
  name: 'contacts',
  processes: [
    {
      name: 'contacts',
      entry: 'dist/index.js',
      port: SERVICE_PORTS.contacts,
      metricsPort: 19082,
      database: 'herald_contacts',
      migrate: 'dist/migrate.js',
      // its outbox relay runs inside it
      topics: {
        creates: [TOPICS.contactsChanged, TOPICS.contactsErased],
        produces: [TOPICS.contactsChanged, TOPICS.contactsErased],
      },
      secrets: SECRETS,
      settings: settingsOf(configSchema, SECRETS),
      calls: {
        auth: 'tenants, JWKS, revocations',
        events: 'the internal export and erase',
        billing: 'subscriptions',
      },
      // Its live set is small, but under upserts V8's own sizing let garbage take it near 300 MiB;
      // collected at twice its live size it stays near 200.
      heap: { semiSpaceMiB: 16, oldSpaceMiB: 128, growingPercent: 100 },
      ingress: [
        { exact: '/v1/contacts' },
        // externalIds may hold an encoded `/` (%2F), which nginx decodes before matching: a
        // prefix, never a per-route pattern
        { prefix: '/v1/contacts/' },
        { regex: '^/admin/v1/tenants/[^/]+/(organizations|contacts(/[^/]+/(export|erase))?)/?$' },
      ],
    },
  ],
  // The by-id routes come first: `by-id` is a literal segment where `:externalId` would match.
  routes: {
    getContactById: { ...read, path: '/v1/contacts/by-id/:id', pathParameters: byId },
    upsertContactByEmail: {
      method: 'post',
      path: '/v1/contacts',
      audience: 'public',
      access: { kind: 'bearer', scope: 'contacts:write' },
      summary: 'Upsert a Contact by email',
      description:
        'Creates the Contact that has this email, or updates it (200) when one exists. Emails compare case-insensitively. Use it for people you know only by email; `PUT /v1/contacts/{externalId}` is for your own ids.',
      requestBody: contactWriteBody,
      requestExample: contactByEmailWriteExample,
      responses: {
        200: {
          description: 'updated',
          schema: contactResponse,
          links: linksById,
          example: contactByEmailUpdatedExample,
        },
        201: {
          description: 'created (no externalId)',
          schema: contactResponse,
          links: linksById,
          example: contactByEmailExample,
        },
        400: error('validation_error', contactByEmailInvalidExample),
        ...common('contacts:write'),
      },
    },
    getContact: { ...read, path: '/v1/contacts/:externalId', pathParameters: byExternalId },
    upsertContact: {
      method: 'put',
      path: '/v1/contacts/:externalId',
      audience: 'public',
      access: { kind: 'bearer', scope: 'contacts:write' },
      summary: 'Upsert a Contact by your own id',
      description:
        'Creates the Contact with this `externalId` (201) or updates it (200). An `email` already held by another Contact of the Tenant is a 409 conflict: nothing is written.',
      pathParameters: byExternalId,
      requestBody: contactWriteBody,
      requestExample: contactWriteExample,
      responses: {
        200: {
          description: 'updated',
          schema: contactResponse,
          links: linksByExternalId,
          example: contactExample,
        },
        201: {
          description: 'created',
          schema: contactResponse,
          links: linksByExternalId,
          example: contactCreatedExample,
        },
        400: error('validation_error', contactInvalidExample),
        ...common('contacts:write'),
        409: error('conflict: the email belongs to another Contact', emailTakenExample),
      },
    },
    exportContactById: {
      ...exportContact,
      path: '/v1/contacts/by-id/:id/export',
      pathParameters: byId,
    },
    eraseContactById: { ...erase, path: '/v1/contacts/by-id/:id/erase', pathParameters: byId },
    exportContact: {
      ...exportContact,
      path: '/v1/contacts/:externalId/export',
      pathParameters: byExternalId,
    },
    eraseContact: {
      ...erase,
      path: '/v1/contacts/:externalId/erase',
      pathParameters: byExternalId,
    },
    createOrganization: {
      method: 'post',
      path: '/admin/v1/tenants/:tenantId/organizations',
      audience: 'operator',
      access: { kind: 'admin' },
      summary: 'Create an organization',
      description:
        'Creates an organization in the Tenant, so that Events can be recorded about it (`POST /v1/events/by-organization`) and attributed to it. An `externalId` already used is a 409.',
      // What the handler takes; anything else names no Tenant and is a 404, never a 400.
      pathParameters: { tenantId: { description: 'the Tenant id', schema: uuidParameter } },
      requestBody: organizationBody,
      requestExample: organizationWriteExample,
      responses: {
        201: { description: 'created', schema: organizationResponse, example: organizationExample },
        400: error('validation_error', organizationInvalidExample),
        401: error('missing or wrong admin token', adminUnauthorizedExample),
        404: error('no such Tenant', noSuchTenantExample),
        409: error(
          'conflict: an organization with this externalId exists',
          organizationTakenExample,
        ),
      },
    },
    listOrganizations: {
      ...operator,
      method: 'get',
      path: '/admin/v1/tenants/:tenantId/organizations',
      summary: "List a Tenant's organizations",
      description:
        "The Tenant's organizations in the order of their `externalId`, a page at a time: `nextCursor` of one page, sent as `cursor`, gives the next.",
      queryParameters: optionalQueryParameters(listOrganizationsQuery.shape),
      responses: {
        200: {
          description: 'a page of organizations',
          schema: organizationListResponse,
          example: organizationListExample,
        },
        400: error(
          'validation_error: a `limit` out of range, or a `cursor` this list did not give',
        ),
        ...operatorRefusals,
      },
    },
    findContacts: {
      ...operator,
      method: 'get',
      path: '/admin/v1/tenants/:tenantId/contacts',
      summary: "Find a Tenant's Contacts by an identity",
      description:
        'The Contacts whose `externalId`, `email` (any case) or `id` is `identity`: for the operator answering a request about a person (a GDPR access or erasure request by email, say). The export and erasure routes below take the `id` it answers. An identity no Contact has is an empty list.',
      queryParameters: {
        identity: {
          description: contactSearchQuery.shape.identity.description ?? 'identity',
          schema: contactSearchQuery.shape.identity,
          required: true,
        },
      },
      responses: {
        200: {
          description: 'the Contacts with that identity',
          schema: contactSearchResponse,
          example: { contacts: [contactExample] },
        },
        400: error('validation_error: `identity` is missing, empty or longer than 256 characters'),
        ...operatorRefusals,
      },
    },
    operatorExportContact: {
      ...operator,
      method: 'get',
      path: '/admin/v1/tenants/:tenantId/contacts/:contactId/export',
      pathParameters: operatorContact,
      answerDeadline: false,
      summary: 'Export everything held about a Contact (GDPR access), as JSON Lines',
      description:
        "The Tenant's own export route (`GET /v1/contacts/by-id/{id}/export`), for the operator: the same file.",
      responses: {
        200: exportContact.responses[200],
        ...operatorRefusals,
        503: exportContact.responses[503],
      },
    },
    operatorEraseContact: {
      ...operator,
      method: 'post',
      path: '/admin/v1/tenants/:tenantId/contacts/:contactId/erase',
      pathParameters: operatorContact,
      answerDeadline: false,
      summary: 'Erase a Contact and everything about it (GDPR erasure), permanently',
      description:
        "The Tenant's own erasure route (`POST /v1/contacts/by-id/{id}/erase`), for the operator: the Contact and its Events are gone everywhere Herald keeps them, for good.",
      responses: { 204: erase.responses[204], ...operatorRefusals },
    },
    // Its route for the other services is defined with the client that calls it.
    resolveIdentities: contactsRoutes.resolveIdentities,
    // The auth service's call for a Tenant's deletion, defined with its client.
    deleteTenantData: tenantDataRoutes.deleteTenantData,
  },
  prefixes: [{ prefix: '/internal', access: 'service' }],
});

/**
 * What each of its commands reads, by the process (or `<service> migration`) that runs it:
 * `npm run generate` writes the README's settings table from these.
 */
export const configSchemas = {
  contacts: configSchema,
  'contacts migration': migrationConfigSchema,
};
