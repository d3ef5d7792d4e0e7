import { z } from 'zod';

/**
 * One documented operation. Request and response shapes are the same zod schemas the routes
 * parse and answer with, so the OpenAPI document cannot drift from the code.
 */
export interface ApiOperation {
  method: 'get' | 'post' | 'put';
  /** OpenAPI path template, e.g. `/v1/contacts/{externalId}`. */
  path: string;
  summary: string;
  tag: 'Public API' | 'Operator API';
  /** `bearer` with the scope the route needs, `basic` for the token exchange, `admin` for ADMIN_TOKEN. */
  auth: { kind: 'bearer'; scope: string } | { kind: 'basic' } | { kind: 'admin' };
  pathParameters?: Record<string, { description: string; schema?: z.ZodType }>;
  requestBody?: z.ZodType;
  /** Status → answer. A `schema` of undefined means no body. */
  responses: Record<number, { description: string; schema?: z.ZodType; contentType?: string }>;
  /**
   * A write that still works while the Tenant's subscription is suspended (the erase routes).
   * Every other bearer write documents the 402.
   */
  allowedWhileSuspended?: boolean;
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

/** The rate-limit headers: on every answer of a budgeted (bearer) route; Retry-After on a 429. */
const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': header("the key's budget for this kind of request (its burst)"),
  'RateLimit-Remaining': header('requests left in the budget right now'),
  'RateLimit-Reset': header('seconds until the budget is full again'),
  'Retry-After': header('whole seconds to wait before resending (at least 1)'),
};
const headerRef = (name: keyof typeof RATE_LIMIT_HEADERS) => ({
  $ref: `#/components/headers/${name}`,
});

function rateLimitHeaders(status: string) {
  return {
    'RateLimit-Limit': headerRef('RateLimit-Limit'),
    'RateLimit-Remaining': headerRef('RateLimit-Remaining'),
    'RateLimit-Reset': headerRef('RateLimit-Reset'),
    ...(status === '429' ? { 'Retry-After': headerRef('Retry-After') } : {}),
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
    };
  }
  responses[429] = {
    description: `rate_limited: the key's ${op.method === 'get' ? 'read (GET)' : 'write'} budget is used up; resend after Retry-After`,
    schema: errorSchemas.standardError,
  };
  return responses;
}

const SECURITY_SCHEMES = {
  accessToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
  clientCredentials: {
    type: 'http',
    scheme: 'basic',
    description: 'ClientID as user, secret as password',
  },
  adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' },
};

function security(auth: ApiOperation['auth']) {
  if (auth.kind === 'bearer') return [{ accessToken: [auth.scope] }];
  if (auth.kind === 'basic') return [{ clientCredentials: [] }];
  return [{ adminToken: [] }];
}

/** An OpenAPI 3.1 document (JSON Schema 2020-12, which zod emits) for the given operations. */
export function buildOpenApi(
  info: { title: string; version: string; description?: string },
  operations: readonly ApiOperation[],
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const sorted = [...operations].sort(
    (a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method),
  );
  for (const op of sorted) {
    const parameters = Object.entries(op.pathParameters ?? {}).map(([name, p]) => ({
      name,
      in: 'path',
      required: true,
      description: p.description,
      schema: p.schema ? jsonSchema(p.schema, 'input') : { type: 'string' },
    }));
    const responses = Object.fromEntries(
      Object.entries(withPolicyAnswers(op)).map(([status, r]) => [
        status,
        {
          description: r.description,
          ...(op.auth.kind === 'bearer' ? { headers: rateLimitHeaders(status) } : {}),
          ...(r.schema
            ? {
                content: {
                  [r.contentType ?? 'application/json']: { schema: jsonSchema(r.schema, 'output') },
                },
              }
            : {}),
        },
      ]),
    );
    paths[op.path] = {
      ...paths[op.path],
      [op.method]: {
        summary: op.summary,
        tags: [op.tag],
        security: security(op.auth),
        ...(parameters.length ? { parameters } : {}),
        ...(op.requestBody
          ? {
              requestBody: {
                required: true,
                content: { 'application/json': { schema: jsonSchema(op.requestBody, 'input') } },
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
    components: { securitySchemes: SECURITY_SCHEMES, headers: RATE_LIMIT_HEADERS },
    paths,
  };
}
