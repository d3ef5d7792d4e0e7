import type { Express } from 'express';
import {
  requireAdminToken,
  requireServiceCaller,
  type ServiceCallers,
  type TenantDirectory,
} from '@herald/auth';
import { pingDatabase, type Pool } from '@herald/db';
import { createHttpApp, mountRoutes, type Logger } from '@herald/http';
import type { SubscriptionMirror } from './domain/redis-mirror.js';
import { adminHandlers } from './routes/admin.js';
import { internalHandlers } from './routes/internal.js';
import { tenantDeletionHandlers } from './routes/tenant-deletion.js';
import { manifest } from './manifest.js';

export interface BillingAppDeps {
  pool: Pool;
  logger: Logger;
  /** The Redis copy every service reads; its failures never fail a request here. */
  mirror: SubscriptionMirror;
  tenantExists: TenantDirectory;
  adminToken: string;
  /**
   * Who may call the internal route the other services call when their Redis copy is missing
   * (SERVICE_CALLERS).
   */
  serviceCallers: ServiceCallers;
  /** Consecutive failed payments that suspend a Tenant (3 by default). */
  suspendAfterFailures: number;
  /** How long one call of the Tenant deletion route deletes before it answers (tests shorten it). */
  tenantDeletionTimeBudgetMs?: number;
}

export function createApp(deps: BillingAppDeps): Express {
  return createHttpApp({
    logger: deps.logger,
    // Redis is not a readiness dependency: changes commit without it and sync later.
    readiness: { database: () => pingDatabase(deps.pool) },
    routes: (app) =>
      mountRoutes(
        app,
        manifest,
        { ...adminHandlers(deps), ...internalHandlers(deps), ...tenantDeletionHandlers(deps) },
        {
          admin: requireAdminToken(deps.adminToken),
          service: requireServiceCaller(deps.serviceCallers),
        },
      ),
  });
}
