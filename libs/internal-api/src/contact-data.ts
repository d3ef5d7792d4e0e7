import { errorSchemas } from '@herald/http';
import { z } from 'zod';
import { defineInternalRoutes } from './route.js';

const error = (description: string) => ({ description, schema: errorSchemas.standardError });

const contactPath = {
  tenantId: { description: 'the Tenant id' },
  contactId: { description: 'the Contact id' },
};

/**
 * The routes of every service holding data about Contacts (the events service), which the
 * contacts service calls, at each base URL of its CONTACT_DATA_SERVICES, for a Contact's GDPR
 * export and erasure.
 */
export const contactDataRoutes = defineInternalRoutes({
  exportContactEvents: {
    method: 'get',
    path: '/internal/v1/tenants/:tenantId/contacts/:contactId/export',
    audience: 'internal',
    access: { kind: 'service', callers: ['contacts'] },
    summary: "A Contact's Events as JSON Lines",
    pathParameters: contactPath,
    responses: {
      200: {
        description: 'one `{"type":"event","data":{…}}` line per Event about the Contact, streamed',
        schema: z.string(),
        contentType: 'application/x-ndjson',
      },
      401: error('unauthenticated: missing or wrong service token'),
      403: error('forbidden: a service token of a caller other than contacts'),
      404: error('not_found: the Tenant or Contact id is not a uuid'),
      429: error(
        'rate_limited: the Tenant already has EXPORT_MAX_CONCURRENT_PER_TENANT exports streaming from this replica; nothing sent; see Retry-After',
      ),
      503: error(
        'service_unavailable: EXPORT_MAX_CONCURRENT exports are streaming from this replica, or the database is unreachable; nothing sent; see Retry-After',
      ),
    },
  },
  eraseContactEvents: {
    method: 'post',
    path: '/internal/v1/tenants/:tenantId/contacts/:contactId/erase',
    audience: 'internal',
    access: { kind: 'service', callers: ['contacts'] },
    summary: "Erase a Contact's Events",
    pathParameters: contactPath,
  },
});
