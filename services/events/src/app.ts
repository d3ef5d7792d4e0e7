import type { Express } from 'express';
import type { TenantDirectory } from '@herald/auth';
import { pingDatabase, type Pool } from '@herald/db';
import { createHttpApp, type Logger } from '@herald/http';
import type { ApiPolicy } from '@herald/policy';
import type { Redis } from '@herald/redis';
import { DEDUP_WINDOW_SECONDS } from './data/dedup-pruning.js';
import { redisDedupCache } from './domain/dedup-cache.js';
import type { IdentityResolver } from './domain/identities.js';
import { recordingMetrics } from './domain/record-events.js';
import { mountAdminRoutes } from './routes/admin.js';
import { mountEventRoutes } from './routes/events.js';
import { mountInternalRoutes } from './routes/internal.js';

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
  /** decisions C.2: 60 s. Tests may shorten it; nothing else should. */
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
    routes: (app) => {
      mountEventRoutes(app, recording);
      mountAdminRoutes(app, deps);
      mountInternalRoutes(app, deps);
    },
  });
}
