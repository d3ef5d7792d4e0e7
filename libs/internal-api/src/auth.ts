import { z } from 'zod';
import { defineInternalRoutes } from './route.js';

/** The auth service's routes for the other services. */
export const authRoutes = defineInternalRoutes({
  // Every service verifies tokens with these keys; only Herald's services fetch them.
  jwks: {
    method: 'get',
    path: '/.well-known/jwks.json',
    audience: 'internal',
    access: { kind: 'none' },
    summary: 'The public keys access tokens are signed with (JWKS)',
    methodNotAllowed: false,
    answer: z.object({ keys: z.array(z.looseObject({ kid: z.string() })) }),
  },
  tenantExists: {
    method: 'get',
    path: '/internal/v1/tenants/:tenantId',
    audience: 'internal',
    // the operator routes of contacts, events and billing check the Tenant first
    access: { kind: 'service', callers: ['contacts', 'events', 'billing'] },
    summary: 'Whether a Tenant exists (404 when not)',
    methodNotAllowed: false,
    answer: z.object({ id: z.uuid() }),
  },
  revokedKeys: {
    method: 'get',
    path: '/internal/v1/revoked-keys',
    audience: 'internal',
    // the services with public routes, which verify access tokens
    access: { kind: 'service', callers: ['contacts', 'events'] },
    summary: 'The ClientIDs of keys revoked while their tokens could still be unexpired',
    methodNotAllowed: false,
    answer: z.object({ clientIds: z.array(z.string()) }),
  },
  eventRetentionOverview: {
    method: 'get',
    path: '/internal/v1/event-retention',
    audience: 'internal',
    // the events service's retention sweep (services/events/src/retention/)
    access: { kind: 'service', callers: ['events'] },
    summary:
      "How long each Tenant's Events are kept: the default, and every Tenant whose retention is another",
    methodNotAllowed: false,
    answer: z.object({
      defaultDays: z.number().int().min(1),
      tenants: z.array(z.object({ tenantId: z.uuid(), days: z.number().int().min(1) })),
    }),
  },
});
