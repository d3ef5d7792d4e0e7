import { errorSchemas, type ApiOperation } from '@herald/http';
import { subscriptionStatusResponse } from './schemas.js';

const error = (description: string) => ({ description, schema: errorSchemas.standardError });

/** One billing row of the operator API: all three answer the status or the same errors. */
function billingOperation(
  method: 'get' | 'post',
  route: string,
  summary: string,
  success: string,
): ApiOperation {
  return {
    method,
    path: `/admin/v1/tenants/{tenantId}/billing${route}`,
    summary,
    tag: 'Operator API',
    auth: { kind: 'admin' },
    pathParameters: { tenantId: { description: 'the Tenant id' } },
    responses: {
      200: { description: success, schema: subscriptionStatusResponse },
      401: error('missing or wrong admin token'),
      404: error('no such Tenant'),
      503: error('service_unavailable: the database or the auth service is unreachable'),
    },
  };
}

/** The billing service's part of the OpenAPI document (scripts/openapi.mjs assembles it). */
export const operations: ApiOperation[] = [
  billingOperation(
    'get',
    '',
    "A Tenant's subscription state and consecutive failed payments",
    'the subscription',
  ),
  billingOperation(
    'post',
    '/payment-failures',
    'Record a failed payment (no body); enough in a row (3 by default) suspend the Tenant, whose writes then answer 402',
    'the subscription after the failure',
  ),
  billingOperation(
    'post',
    '/payment-details',
    'Record updated payment details (no body): the Tenant is active again, failures reset',
    'active, no failures',
  ),
];
