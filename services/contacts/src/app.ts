import type { Express } from 'express';
import {
  requireAdminToken,
  requireServiceCaller,
  type Scope,
  type ServiceCallers,
  type TenantDirectory,
} from '@herald/auth';
import { pingDatabase, type Pool } from '@herald/db';
import { createHttpApp, mountRoutes, type Logger } from '@herald/http';
import type { ApiPolicy } from '@herald/policy';
import { contactReads, contactUpserts } from './domain/contacts.js';
import { adminHandlers } from './routes/admin.js';
import { contactHandlers } from './routes/contacts.js';
import { exportEraseHandlers } from './routes/export-erase.js';
import { internalHandlers } from './routes/internal.js';
import { tenantDeletionHandlers } from './routes/tenant-deletion.js';
import { manifest } from './manifest.js';

export interface ContactsAppDeps {
  pool: Pool;
  /** The internal identity lookups' own pool, created with `planOnce`. */
  identityPool: Pool;
  logger: Logger;
  /** Tokens, rate budgets and subscription state of the public routes. */
  policy: ApiPolicy;
  adminToken: string;
  /** Its own token for the internal routes of the services holding data about Contacts. */
  serviceToken: string;
  /** Who may call its internal route (SERVICE_CALLERS). */
  serviceCallers: ServiceCallers;
  tenantExists: TenantDirectory;
  /** Base URLs of the services holding data about Contacts (export and erasure); default none. */
  contactDataServiceUrls?: readonly string[];
  /** How long one call of the Tenant deletion route deletes before it answers (tests shorten it). */
  tenantDeletionTimeBudgetMs?: number;
}

export function createApp(deps: ContactsAppDeps): Express {
  const reads = contactReads(deps.pool);
  const upserts = contactUpserts(deps.pool);
  return createHttpApp({
    logger: deps.logger,
    readiness: {
      database: () => pingDatabase(deps.pool),
      revocations: () => deps.policy.ready(),
    },
    routes: (app) =>
      mountRoutes(
        app,
        manifest,
        {
          ...contactHandlers({ reads, upserts }),
          ...exportEraseHandlers(deps),
          ...adminHandlers(deps),
          ...internalHandlers(deps),
          ...tenantDeletionHandlers(deps),
        },
        {
          bearer: (scope, options) => deps.policy.guard({ scope: scope as Scope, ...options }),
          admin: requireAdminToken(deps.adminToken),
          service: requireServiceCaller(deps.serviceCallers),
        },
      ),
  });
}
