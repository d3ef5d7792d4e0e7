import { z } from 'zod';
import { errorSchemas, type ApiOperation } from '@herald/http';
import { contactResponse, contactWriteBody, externalId, organizationBody } from './schemas.js';

const { standardError } = errorSchemas;
const error = (description: string) => ({ description, schema: standardError });
const byExternalId = {
  externalId: { description: "the caller's id, percent-encoded (`/` as %2F)", schema: externalId },
};
const byId = { id: { description: 'the Contact id assigned by Herald', schema: z.uuid() } };
const common = {
  401: error('unauthenticated: missing, malformed or expired token'),
  403: error('insufficient_scope'),
};

const organizationResponse = z.object({
  externalId: z.string(),
  name: z.string().nullable(),
  createdAt: z.iso.datetime(),
});

function readOps(path: string, params: ApiOperation['pathParameters']): ApiOperation[] {
  return [
    {
      method: 'get',
      path,
      summary: 'Read a Contact',
      tag: 'Public API',
      auth: { kind: 'bearer', scope: 'contacts:read' },
      pathParameters: params,
      responses: {
        200: { description: 'the Contact', schema: contactResponse },
        ...common,
        404: error('not_found'),
      },
    },
    {
      method: 'get',
      path: `${path}/export`,
      summary: 'Export everything held about a Contact (GDPR access), as JSON Lines',
      tag: 'Public API',
      auth: { kind: 'bearer', scope: 'contacts:export' },
      pathParameters: params,
      responses: {
        200: {
          description:
            'line 1 `{"type":"contact","data":{…}}`, then one `{"type":"event","data":{…}}` per Event',
          schema: z.string(),
          contentType: 'application/x-ndjson',
        },
        ...common,
        404: error('not_found'),
        503: error("service_unavailable: a service holding the Contact's data is unreachable"),
      },
    },
    {
      method: 'post',
      path: `${path}/erase`,
      summary: 'Erase a Contact and everything about it (GDPR erasure), permanently',
      tag: 'Public API',
      auth: { kind: 'bearer', scope: 'contacts:erase' },
      allowedWhileSuspended: true,
      pathParameters: params,
      responses: {
        204: { description: 'erased (by id: again 204 on retry)' },
        ...common,
        404: error('not_found'),
      },
    },
  ];
}

/** The contacts service's part of the OpenAPI document (scripts/openapi.mjs assembles it). */
export const operations: ApiOperation[] = [
  {
    method: 'put',
    path: '/v1/contacts/{externalId}',
    summary: 'Upsert a Contact by your own id',
    tag: 'Public API',
    auth: { kind: 'bearer', scope: 'contacts:write' },
    pathParameters: byExternalId,
    requestBody: contactWriteBody,
    responses: {
      200: { description: 'updated', schema: contactResponse },
      201: { description: 'created', schema: contactResponse },
      400: error('validation_error'),
      ...common,
      409: error('conflict: the email belongs to another Contact'),
    },
  },
  {
    method: 'post',
    path: '/v1/contacts',
    summary: 'Upsert a Contact by email',
    tag: 'Public API',
    auth: { kind: 'bearer', scope: 'contacts:write' },
    requestBody: contactWriteBody,
    responses: {
      200: { description: 'updated', schema: contactResponse },
      201: { description: 'created (no externalId)', schema: contactResponse },
      400: error('validation_error'),
      ...common,
    },
  },
  ...readOps('/v1/contacts/{externalId}', byExternalId),
  ...readOps('/v1/contacts/by-id/{id}', byId),
  {
    method: 'post',
    path: '/admin/v1/tenants/{tenantId}/organizations',
    summary: 'Create an organization',
    tag: 'Operator API',
    auth: { kind: 'admin' },
    pathParameters: { tenantId: { description: 'the Tenant id' } },
    requestBody: organizationBody,
    responses: {
      201: { description: 'created', schema: organizationResponse },
      400: error('validation_error'),
      401: error('missing or wrong admin token'),
      404: error('no such Tenant'),
      409: error('conflict: an organization with this externalId exists'),
    },
  },
];
