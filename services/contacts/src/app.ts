import type { Express } from 'express';
import type { TenantDirectory } from '@herald/auth';
import { pingDatabase, type Pool } from '@herald/db';
import { createHttpApp, type Logger } from '@herald/http';
import type { ApiPolicy } from '@herald/policy';
import { mountAdminRoutes } from './routes/admin.js';
import { mountContactRoutes } from './routes/contacts.js';
import { mountExportEraseRoutes } from './routes/export-erase.js';
import { mountInternalRoutes } from './routes/internal.js';

export interface ContactsAppDeps {
  pool: Pool;
  logger: Logger;
  /** Tokens, rate budgets and subscription state of the public routes. */
  policy: ApiPolicy;
  adminToken: string;
  serviceToken: string;
  tenantExists: TenantDirectory;
  /** Base URLs of the services holding data about Contacts (export and erasure); default none. */
  contactDataServiceUrls?: readonly string[];
}

export function createApp(deps: ContactsAppDeps): Express {
  return createHttpApp({
    logger: deps.logger,
    readiness: {
      database: () => pingDatabase(deps.pool),
      revocations: () => deps.policy.ready(),
    },
    routes: (app) => {
      mountContactRoutes(app, deps);
      mountExportEraseRoutes(app, deps);
      mountAdminRoutes(app, deps);
      mountInternalRoutes(app, deps);
    },
  });
}
