// The billing service, declared once: its process and its routes. `npm run generate` derives
// the OpenAPI document, the local stack's registry, the chart's process list and the compose
// ingress from it; the app mounts its routes from it. Light on purpose: scripts import it.
import {
  adminUnauthorizedExample,
  defineService,
  errorSchemas,
  noSuchTenantExample,
  settingsOf,
  uuidParameter,
  type RouteSpec,
} from '@herald/http';
import { billingRoutes, SERVICE_PORTS, tenantDataRoutes } from '@herald/internal-api';
import { TOPICS } from '@herald/messages';
import { subscriptionStatusResponse } from './schemas.js';
import { configSchema, migrationConfigSchema } from './config.js';
import { reactivatedExample, subscriptionExample, suspendedExample } from './examples.js';

const error = (description: string, example?: unknown) => ({
  description,
  schema: errorSchemas.standardError,
  ...(example === undefined ? {} : { example }),
});

/** The operator API's billing rows all answer the status, or the same errors. */
const billingRoute = {
  audience: 'operator',
  access: { kind: 'admin' },
  // What the handlers take; anything else names no Tenant and is a 404, never a 400.
  pathParameters: { tenantId: { description: 'the Tenant id', schema: uuidParameter } },
} as const satisfies Partial<RouteSpec>;
const billingResponses = (success: string, example: unknown) => ({
  200: { description: success, schema: subscriptionStatusResponse, example },
  401: error('missing or wrong admin token', adminUnauthorizedExample),
  404: error('no such Tenant', noSuchTenantExample),
  503: error('service_unavailable: the database or the auth service is unreachable'),
});

/**
 * The secrets the service gets (from the Secret, never from settings): the operator token, its
 * own token for the auth service, and who may call its internal route.
 */
const SECRETS = ['ADMIN_TOKEN', 'SERVICE_TOKEN', 'SERVICE_CALLERS'];

export const manifest = defineService({
  name: 'billing',
  processes: [
    {
      // Subscription state: PostgreSQL, mirrored to Redis for every service's write check; its
      // outbox relay runs inside it.
      name: 'billing',
      entry: 'dist/index.js',
      port: SERVICE_PORTS.billing,
      metricsPort: 19084,
      database: 'herald_billing',
      migrate: 'dist/migrate.js',
      topics: {
        creates: [TOPICS.subscriptionsChanged],
        produces: [TOPICS.subscriptionsChanged],
      },
      secrets: SECRETS,
      settings: settingsOf(configSchema, SECRETS),
      calls: { auth: 'whether a Tenant exists' },
      ingress: [{ regex: '^/admin/v1/tenants/[^/]+/billing(/.*)?$' }],
    },
  ],
  // The POSTs take no body; one sent anyway is ignored, as the key revoke route does.
  routes: {
    subscription: {
      ...billingRoute,
      method: 'get',
      path: '/admin/v1/tenants/:tenantId/billing',
      summary: "A Tenant's subscription state and consecutive failed payments",
      description:
        'Whether the Tenant is active or suspended, and how many payments failed in a row.',
      responses: billingResponses('the subscription', subscriptionExample),
    },
    recordPaymentFailure: {
      ...billingRoute,
      method: 'post',
      path: '/admin/v1/tenants/:tenantId/billing/payment-failures',
      summary:
        'Record a failed payment (no body); enough in a row (3 by default) suspend the Tenant, whose writes then answer 402',
      description:
        'Counts one more failed payment. When the count reaches the limit the Tenant is suspended: its writes answer 402 within seconds, reads and erasure keep working.',
      responses: billingResponses('the subscription after the failure', suspendedExample),
    },
    recordPaymentDetails: {
      ...billingRoute,
      method: 'post',
      path: '/admin/v1/tenants/:tenantId/billing/payment-details',
      summary:
        'Record updated payment details (no body): the Tenant is active again, failures reset',
      description:
        'Marks the Tenant as paying again: it is active, its failure count is reset, and its writes are accepted again within seconds.',
      responses: billingResponses('active, no failures', reactivatedExample),
    },
    // Its route for the other services is defined with the clients that call it.
    subscriptionSnapshot: billingRoutes.subscriptionSnapshot,
    // The auth service's call for a Tenant's deletion, defined with its client.
    deleteTenantData: tenantDataRoutes.deleteTenantData,
  },
  prefixes: [{ prefix: '/internal', access: 'service' }],
});

/**
 * What each of its commands reads, by the process (or `<service> migration`) that runs it:
 * `npm run generate` writes the README's settings table from these.
 */
export const configSchemas = { billing: configSchema, 'billing migration': migrationConfigSchema };
