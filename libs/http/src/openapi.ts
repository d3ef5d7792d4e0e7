import { z } from 'zod';
import {
  badGatewayPage,
  dotSegmentExample,
  gatewayTimeoutPage,
  internalErrorExample,
  methodNotAllowedExample,
  notFoundExample,
  payloadTooLargeExample,
  rateLimitedExample,
  serviceUnavailableExample,
  subscriptionSuspendedExample,
} from './examples.js';
import { STORABLE_JSON_VALUE_REF, STORABLE_PATTERN } from './schemas.js';

/**
 * One documented operation. Request and response shapes are the same zod schemas the routes
 * parse and answer with, so the OpenAPI document cannot drift from the code.
 */
export interface ApiOperation {
  /** The route's id in its service's manifest: unique across the API. */
  operationId: string;
  method: 'get' | 'post' | 'put' | 'delete';
  /** OpenAPI path template, e.g. `/v1/contacts/{externalId}`. */
  path: string;
  summary: string;
  /** What it does and what to know before calling it (CommonMark). */
  description?: string;
  tag: 'Public API' | 'Operator API';
  /**
   * `bearer` with the scope the route needs, `basic` for the token exchange, `admin` for
   * ADMIN_TOKEN, `none` for what anyone may read (the document itself).
   */
  auth:
    { kind: 'bearer'; scope: string } | { kind: 'basic' } | { kind: 'admin' } | { kind: 'none' };
  pathParameters?: Record<string, { description: string; schema?: z.ZodType }>;
  /** Query parameters, each required unless it says otherwise. */
  queryParameters?: Record<string, { description: string; schema?: z.ZodType; required?: boolean }>;
  requestBody?: z.ZodType;
  /** A request body the local stack accepted: shown in the reference, checked by its schema. */
  requestExample?: unknown;
  /** Status → answer. A `schema` of undefined means no body. */
  responses: Record<number, ApiAnswer>;
  /**
   * A write that still works while the Tenant's subscription is suspended (the erase routes).
   * Every other bearer write documents the 402.
   */
  allowedWhileSuspended?: boolean;
}

/** One answer of an operation. */
export interface ApiAnswer {
  description: string;
  schema?: z.ZodType;
  contentType?: string;
  /**
   * OpenAPI links: the operations this answer lets a client call next, with their parameters as
   * runtime expressions (`$request.path.externalId`, `$response.body#/id`).
   */
  links?: Record<string, { operationId: string; parameters: Record<string, string> }>;
  /** A real answer, as the local stack gave it: shown in the reference, checked by its schema. */
  example?: unknown;
}

/** The API's three error bodies (standard, 402, 422), for documentation. */
export const errorSchemas = {
  standardError: z.object({ code: z.string(), message: z.string() }),
  problemDetails: z.object({
    type: z.literal('subscription_suspended'),
    title: z.string(),
    status: z.literal(402),
    detail: z.string(),
  }),
  unresolvedIdentity: z.object({
    code: z.literal('unresolved_identity'),
    message: z.string(),
    unresolved: z.array(
      z.object({
        index: z.number().int(),
        eventName: z.string(),
        contactId: z.string().nullable(),
        contactExternalId: z.string().nullable(),
        contactEmail: z.string().nullable(),
        organizationExternalId: z.string().nullable(),
      }),
    ),
  }),
};

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') =>
  z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;

const header = (description: string) => ({ description, schema: { type: 'integer' } });

/**
 * The rate-limit headers, on every answer of a budgeted (bearer) route, and Retry-After, on
 * every 429 and 503 of any route: the services' (`errors.rateLimited`, `errors.unavailable`) and
 * the ingress's own 503 always carry it.
 */
const TIMING_HEADERS = {
  'RateLimit-Limit': header("the key's budget for this kind of request (its burst)"),
  'RateLimit-Remaining': header('requests left in the budget right now'),
  'RateLimit-Reset': header('seconds until the budget is full again'),
  'Retry-After': header('whole seconds to wait before resending (at least 1)'),
};
const headerRef = (name: keyof typeof TIMING_HEADERS) => ({
  $ref: `#/components/headers/${name}`,
});

/** The answers only an ingress controller in front of Herald gives: no service header on them. */
const INGRESS_ONLY = new Set(['502', '504']);

function timingHeaders(op: ApiOperation, status: string) {
  return {
    ...(op.auth.kind === 'bearer' && !INGRESS_ONLY.has(status)
      ? {
          'RateLimit-Limit': headerRef('RateLimit-Limit'),
          'RateLimit-Remaining': headerRef('RateLimit-Remaining'),
          'RateLimit-Reset': headerRef('RateLimit-Reset'),
        }
      : {}),
    ...(status === '429' || status === '503' ? { 'Retry-After': headerRef('Retry-After') } : {}),
  };
}

/** The answers every bearer route can give because of the shared policy (libs/policy). */
function withPolicyAnswers(op: ApiOperation): ApiOperation['responses'] {
  if (op.auth.kind !== 'bearer') return op.responses;
  const responses: ApiOperation['responses'] = { ...op.responses };
  if (op.method !== 'get' && !op.allowedWhileSuspended) {
    responses[402] = {
      description: "subscription_suspended: the Tenant's subscription is suspended",
      schema: errorSchemas.problemDetails,
      contentType: 'application/problem+json',
      example: subscriptionSuspendedExample,
    };
  }
  responses[429] = {
    description: `rate_limited: the key's ${op.method === 'get' ? 'read (GET)' : 'write'} budget is used up; resend after Retry-After`,
    schema: errorSchemas.standardError,
    example: rateLimitedExample,
  };
  return responses;
}

const SECURITY_SCHEMES = {
  accessToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'An access token from `POST /v1/token`, valid 900 seconds; its scopes come from the API key',
  },
  clientCredentials: {
    type: 'http',
    scheme: 'basic',
    description:
      "An API key's ClientID as the user name and its secret as the password; only `POST /v1/token` takes it",
  },
  adminToken: {
    type: 'http',
    scheme: 'bearer',
    description: "The operator's ADMIN_TOKEN; only the operator routes take it",
  },
};

function security(auth: ApiOperation['auth']) {
  if (auth.kind === 'bearer') return [{ accessToken: [auth.scope] }];
  if (auth.kind === 'basic') return [{ clientCredentials: [] }];
  if (auth.kind === 'none') return [];
  return [{ adminToken: [] }];
}

/** What an ingress controller in front of Herald sends with its own 502 or 504. */
const ingressErrorPage = z
  .string()
  .describe(
    "the ingress controller's own error page, not one of Herald's error bodies (ingress-nginx: HTML)",
  );

/** The error bodies as named components, so clients generate one type for each. */
const ERROR_COMPONENTS = new Map<z.ZodType, string>([
  [errorSchemas.standardError, 'Error'],
  [errorSchemas.problemDetails, 'SubscriptionSuspended'],
  [errorSchemas.unresolvedIdentity, 'UnresolvedIdentity'],
  [ingressErrorPage, 'IngressErrorPage'],
]);

/**
 * Answers any operation can get from the ingress or the service itself besides its own: a body
 * over the limit, an unknown path or method, a failure inside Herald, a service not answering.
 */
function withCommonAnswers(op: ApiOperation): ApiOperation['responses'] {
  const error = errorSchemas.standardError;
  const common: ApiOperation['responses'] = {
    // Any path can be sent with a dot-segment or broken percent-encoding.
    400: {
      description:
        'validation_error: the path has a `.` or `..` segment (`%2e` and `%2F` count) or malformed percent-encoding',
      schema: error,
      example: dotSegmentExample,
    },
    404: {
      description: 'not_found: no such route (or no such resource where the path names one)',
      schema: error,
      example: notFoundExample,
    },
    405: {
      description:
        'method_not_allowed: the path does not take this method; `Allow` lists those it takes',
      schema: error,
      example: methodNotAllowedExample,
    },
    500: {
      description:
        'internal_error: an unexpected failure inside Herald; safe to resend with the same dedupKeys',
      schema: error,
      example: internalErrorExample,
    },
    // The local stack's ingress answers its 502 and 504 as this 503, with Retry-After
    // (infra/nginx/nginx.conf.template).
    503: {
      description:
        'service_unavailable: a service or a backing store Herald needs is not answering; resend after Retry-After',
      schema: error,
      example: serviceUnavailableExample,
    },
    // A deployment's ingress controller answers these itself, with its own body: ingress-nginx's
    // built-in HTML pages unless its custom error pages are set up (docs/deployment.md).
    502: {
      description:
        'from the ingress controller, not Herald: the service is unreachable; its own page as body (locally: 503)',
      schema: ingressErrorPage,
      contentType: 'text/html',
      example: badGatewayPage,
    },
    504: {
      description:
        'from the ingress controller, not Herald: no answer in time, the request may be done; its own page as body (locally: 503)',
      schema: ingressErrorPage,
      contentType: 'text/html',
      example: gatewayTimeoutPage,
    },
  };
  // The ingress limits every body, also where the route itself takes none.
  if (op.method !== 'get') {
    common[413] = {
      description: 'payload_too_large: the body is over the size limit',
      schema: error,
      example: payloadTooLargeExample,
    };
  }
  const own = { ...withPolicyAnswers(op) };
  // A route that words a common answer its own way, with the same body, shows the shared example
  // unless it gives its own: every route can get that answer.
  for (const [status, answer] of Object.entries(own)) {
    const shared = common[Number(status)];
    if (shared && answer.example === undefined && answer.schema === shared.schema) {
      own[Number(status)] = { ...answer, example: shared.example };
    }
  }
  return { ...common, ...own };
}

/** Any JSON value whose strings and keys hold no U+0000 (Event properties are made of them). */
const STORABLE_JSON_VALUE = {
  description: 'any JSON value; no string or key in it holds U+0000',
  anyOf: [
    { type: 'string', pattern: STORABLE_PATTERN },
    { type: 'number' },
    { type: 'boolean' },
    { type: 'null' },
    { type: 'array', items: { $ref: STORABLE_JSON_VALUE_REF } },
    {
      type: 'object',
      propertyNames: { pattern: STORABLE_PATTERN },
      additionalProperties: { $ref: STORABLE_JSON_VALUE_REF },
    },
  ],
};

/** What every body must be besides its schema (jsonBody): no pattern says it for every client. */
const REQUEST_BODY =
  'JSON in UTF-8 in which every string and key is well-formed Unicode: an unpaired surrogate (such as the escape `\\ud800` alone) is a 400';

const ALLOW_HEADER = {
  description: 'the methods the path takes (RFC 9110)',
  schema: { type: 'string' },
};

/** On every 401 (RFC 9110): how to authenticate, Basic for the token exchange, else Bearer. */
const WWW_AUTHENTICATE_HEADER = {
  description:
    'the authentication scheme the route takes (RFC 9110): `Basic realm="herald"` on the token exchange, `Bearer realm=…` on the others',
  required: true,
  schema: { type: 'string', pattern: '^(Basic|Bearer) ' },
};

export interface ApiDocumentOptions {
  title: string;
  version: string;
  description?: string;
  /** OpenAPI `info.license`: `name`, and where a licence text or SPDX id exists, that. */
  license?: { name: string; identifier?: string; url?: string };
  /** Where the API is served (the ingress), first the one a reader most likely wants. */
  servers?: readonly { url: string; description: string; variables?: Record<string, unknown> }[];
}

/** An OpenAPI 3.1 document (JSON Schema 2020-12, which zod emits) for the given operations. */
export function buildOpenApi(
  options: ApiDocumentOptions,
  operations: readonly ApiOperation[],
): Record<string, unknown> {
  const { servers, ...info } = options;
  const operationIds = new Set<string>();
  const bodySchema = (schema: z.ZodType) => {
    const name = ERROR_COMPONENTS.get(schema);
    return name ? { $ref: `#/components/schemas/${name}` } : jsonSchema(schema, 'output');
  };
  const paths: Record<string, Record<string, unknown>> = {};
  const sorted = [...operations].sort(
    (a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method),
  );
  for (const op of sorted) {
    if (operationIds.has(op.operationId))
      throw new Error(`operationId ${op.operationId} is used twice`);
    operationIds.add(op.operationId);
    const parameters = [
      ...Object.entries(op.pathParameters ?? {}).map(([name, p]) => ({
        name,
        in: 'path',
        required: true,
        description: p.description,
        schema: p.schema ? jsonSchema(p.schema, 'input') : { type: 'string' },
      })),
      ...Object.entries(op.queryParameters ?? {}).map(([name, p]) => ({
        name,
        in: 'query',
        required: p.required ?? true,
        description: p.description,
        schema: p.schema ? jsonSchema(p.schema, 'input') : { type: 'string' },
      })),
    ];
    const responses = Object.fromEntries(
      Object.entries(withCommonAnswers(op)).map(([status, r]) => {
        const headers = {
          ...timingHeaders(op, status),
          ...(status === '405' ? { Allow: { $ref: '#/components/headers/Allow' } } : {}),
          ...(status === '401'
            ? { 'WWW-Authenticate': { $ref: '#/components/headers/WWW-Authenticate' } }
            : {}),
        };
        return [
          status,
          {
            description: r.description,
            ...(Object.keys(headers).length ? { headers } : {}),
            ...(r.links ? { links: r.links } : {}),
            ...(r.schema
              ? {
                  content: {
                    [r.contentType ?? 'application/json']: {
                      schema: bodySchema(r.schema),
                      ...(r.example === undefined ? {} : { example: r.example }),
                    },
                  },
                }
              : {}),
          },
        ];
      }),
    );
    paths[op.path] = {
      ...paths[op.path],
      [op.method]: {
        operationId: op.operationId,
        summary: op.summary,
        ...(op.description ? { description: op.description } : {}),
        tags: [op.tag],
        security: security(op.auth),
        ...(parameters.length ? { parameters } : {}),
        ...(op.requestBody
          ? {
              requestBody: {
                description: REQUEST_BODY,
                required: true,
                content: {
                  'application/json': {
                    schema: jsonSchema(op.requestBody, 'input'),
                    ...(op.requestExample === undefined ? {} : { example: op.requestExample }),
                  },
                },
              },
            }
          : {}),
        responses,
      },
    };
  }
  return {
    openapi: '3.1.0',
    info,
    ...(servers?.length ? { servers } : {}),
    tags: [
      { name: 'Public API', description: 'What customers call with an access token' },
      { name: 'Operator API', description: 'What operators call with the admin token' },
    ],
    components: {
      securitySchemes: SECURITY_SCHEMES,
      headers: {
        ...TIMING_HEADERS,
        Allow: ALLOW_HEADER,
        'WWW-Authenticate': WWW_AUTHENTICATE_HEADER,
      },
      schemas: {
        ...Object.fromEntries(
          [...ERROR_COMPONENTS].map(([schema, name]) => [name, jsonSchema(schema, 'output')]),
        ),
        StorableJsonValue: STORABLE_JSON_VALUE,
      },
    },
    paths,
  };
}
