import type { Express } from 'express';
import { requireAdminToken, requireServiceCaller, type ServiceCallers } from '@herald/auth';
import { pingDatabase, type Pool } from '@herald/db';
import { createHttpApp, mountRoutes, type Logger } from '@herald/http';
import type { ExchangeGuard } from './domain/exchange-guard.js';
import type { SecretHasher } from './domain/secret-hasher.js';
import type { TokenSigner } from './domain/signing-keys.js';
import type { TenantDeleter } from './domain/tenant-deletion.js';
import { makeDecoyHash } from './domain/token-exchange.js';
import { adminHandlers, eventRetentionHandlers } from './routes/admin.js';
import { eventRetentionInternalHandlers, internalHandlers } from './routes/internal.js';
import { referenceHandlers } from './routes/reference.js';
import { tenantDeletionHandlers } from './routes/tenant-deletion.js';
import { jwksHandlers, tokenHandlers } from './routes/token.js';
import { manifest } from './manifest.js';

export interface AuthAppDeps {
  pool: Pool;
  logger: Logger;
  signer: TokenSigner;
  hasher: SecretHasher;
  adminToken: string;
  /** Who may call the internal routes (SERVICE_CALLERS); each route's manifest says whom it lets in. */
  serviceCallers: ServiceCallers;
  exchangeGuard: ExchangeGuard;
  /** Runs the Tenant deletions the DELETE marks (in the background, until done). */
  tenantDeleter: TenantDeleter;
  /** EVENT_RETENTION_DAYS_DEFAULT: the Event retention of Tenants without one of their own. */
  eventRetentionDefaultDays: number;
}

export async function createApp(deps: AuthAppDeps): Promise<Express> {
  const decoyHash = await makeDecoyHash(deps.hasher);
  return createHttpApp({
    logger: deps.logger,
    readiness: { database: () => pingDatabase(deps.pool) },
    routes: (app) =>
      mountRoutes(
        app,
        manifest,
        {
          ...jwksHandlers(deps.signer.jwks),
          ...referenceHandlers(),
          ...tokenHandlers({
            pool: deps.pool,
            hasher: deps.hasher,
            signer: deps.signer,
            decoyHash,
            guard: deps.exchangeGuard,
          }),
          ...adminHandlers({ pool: deps.pool, hasher: deps.hasher }),
          ...internalHandlers({ pool: deps.pool }),
          ...tenantDeletionHandlers(deps),
          ...eventRetentionHandlers(deps),
          ...eventRetentionInternalHandlers(deps),
        },
        {
          admin: requireAdminToken(deps.adminToken),
          service: requireServiceCaller(deps.serviceCallers),
        },
      ),
  });
}
