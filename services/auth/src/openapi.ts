import { errorSchemas, type ApiOperation } from '@herald/http';
import {
  apiKeyResponse,
  createApiKeyBody,
  createTenantBody,
  tenantResponse,
  tokenResponse,
} from './schemas.js';

const { standardError } = errorSchemas;
const unauthorizedAdmin = { description: 'missing or wrong admin token', schema: standardError };
const tenantId = { tenantId: { description: 'the Tenant id' } };

/** The auth service's part of the OpenAPI document (scripts/openapi.mjs assembles it). */
export const operations: ApiOperation[] = [
  {
    method: 'post',
    path: '/v1/token',
    summary: 'Exchange an API key for an access token (spec 4.2)',
    tag: 'Public API',
    auth: { kind: 'basic' },
    responses: {
      200: { description: 'an access token, valid 900 seconds', schema: tokenResponse },
      401: {
        description: 'invalid_client: wrong ClientID or secret, or revoked key',
        schema: standardError,
      },
      429: {
        description:
          'rate_limited: too many failed exchanges for this ClientID or from this address (decisions F.4); Retry-After says when to try again',
        schema: standardError,
      },
    },
  },
  {
    method: 'post',
    path: '/admin/v1/tenants',
    summary: 'Create a Tenant',
    tag: 'Operator API',
    auth: { kind: 'admin' },
    requestBody: createTenantBody,
    responses: {
      201: { description: 'created', schema: tenantResponse },
      400: { description: 'validation_error', schema: standardError },
      401: unauthorizedAdmin,
    },
  },
  {
    method: 'post',
    path: '/admin/v1/tenants/{tenantId}/api-keys',
    summary: 'Create an API key (secret or publishable)',
    tag: 'Operator API',
    auth: { kind: 'admin' },
    pathParameters: tenantId,
    requestBody: createApiKeyBody,
    responses: {
      201: { description: 'created; a secret is shown only here', schema: apiKeyResponse },
      400: { description: 'validation_error', schema: standardError },
      401: unauthorizedAdmin,
      404: { description: 'no such Tenant', schema: standardError },
    },
  },
  {
    method: 'post',
    path: '/admin/v1/tenants/{tenantId}/api-keys/{clientId}/revoke',
    summary: 'Revoke an API key',
    tag: 'Operator API',
    auth: { kind: 'admin' },
    pathParameters: { ...tenantId, clientId: { description: 'the key ClientID' } },
    responses: {
      204: { description: 'revoked (again: still 204)' },
      401: unauthorizedAdmin,
      404: { description: 'no such key in this Tenant', schema: standardError },
    },
  },
];
