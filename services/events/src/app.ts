import type { Express } from 'express';
import {
  requireAdminToken,
  requireServiceToken,
  type Scope,
  type TenantDirectory,
} from '@herald/auth';
import { pingDatabase, type Pool } from '@herald/db';
import { createHttpApp, mountRoutes, type Logger } from '@herald/http';
import type { ApiPolicy } from '@herald/policy';
import type { Redis } from '@herald/redis';
import { redisDedupCache } from './clients/redis-dedup-cache.js';
import { DEDUP_WINDOW_SECONDS } from './domain/dedup-key.js';
import type { IdentityResolver } from './domain/identities.js';
import { recordingMetrics } from './domain/record-events.js';
import { adminHandlers } from './routes/admin.js';
import { eventHandlers } from './routes/events.js';
import { internalHandlers } from './routes/internal.js';
import { manifest } from './service.js';

export interface EventsAppDeps {
  pool: Pool;
  logger: Logger;
  /** Tokens, rate budgets and subscription state of the public routes. */
  policy: ApiPolicy;
  /** The dedup fast path; PostgreSQL stays the authority, so Redis may be away. */
  redis: Redis;
  /** The contacts service's batch identity lookup: one call per request. */
  resolveIdentities: IdentityResolver;
  /** Whether a Tenant exists (the auth service), for the operator routes. */
  tenantExists: TenantDirectory;
  adminToken: string;
  /** Opens the internal routes the contacts service calls. */
  serviceToken: string;
  /** The dedup window, 60 s. Tests may shorten it; nothing else should. */
  dedupWindowMs?: number;
}

export function createApp(deps: EventsAppDeps): Express {
  const recording = {
    pool: deps.pool,
    policy: deps.policy,
    resolveIdentities: deps.resolveIdentities,
    dedupCache: redisDedupCache(deps.redis, { logger: deps.logger }),
    dedupWindowMs: deps.dedupWindowMs ?? DEDUP_WINDOW_SECONDS * 1000,
    metrics: recordingMetrics(),
  };
  return createHttpApp({
    logger: deps.logger,
    // Redis is not a readiness dependency: recording works without it.
    readiness: {
      database: () => pingDatabase(deps.pool),
      revocations: () => deps.policy.ready(),
    },
    routes: (app) =>
      mountRoutes(
        app,
        manifest,
        { ...eventHandlers(recording), ...adminHandlers(deps), ...internalHandlers(deps) },
        {
          bearer: (scope, options) => deps.policy.guard({ scope: scope as Scope, ...options }),
          admin: requireAdminToken(deps.adminToken),
          service: requireServiceToken(deps.serviceToken),
        },
      ),
  });
}
