import type { Express } from 'express';
import { pingDatabase, type Pool } from '@herald/db';
import { createHttpApp, type Logger } from '@herald/http';
import { createApiKeysRepository } from './data/api-keys-repository.js';
import { createTenantsRepository } from './data/tenants-repository.js';
import type { ExchangeGuard } from './domain/exchange-guard.js';
import type { SecretHasher } from './domain/secret-hasher.js';
import type { TokenSigner } from './domain/signing-keys.js';
import { makeDecoyHash } from './domain/token-exchange.js';
import { mountAdminRoutes } from './routes/admin.js';
import { mountInternalRoutes } from './routes/internal.js';
import { mountJwksRoute, mountTokenRoutes } from './routes/token.js';

export interface AuthAppDeps {
  pool: Pool;
  logger: Logger;
  signer: TokenSigner;
  hasher: SecretHasher;
  adminToken: string;
  serviceToken: string;
  exchangeGuard: ExchangeGuard;
}

export async function createApp(deps: AuthAppDeps): Promise<Express> {
  const tenants = createTenantsRepository(deps.pool);
  const apiKeys = createApiKeysRepository(deps.pool);
  const decoyHash = await makeDecoyHash(deps.hasher);
  return createHttpApp({
    logger: deps.logger,
    readiness: { database: () => pingDatabase(deps.pool) },
    routes: (app) => {
      mountJwksRoute(app, deps.signer.jwks);
      mountTokenRoutes(app, {
        apiKeys,
        hasher: deps.hasher,
        signer: deps.signer,
        decoyHash,
        guard: deps.exchangeGuard,
      });
      mountAdminRoutes(app, { tenants, apiKeys, hasher: deps.hasher, adminToken: deps.adminToken });
      mountInternalRoutes(app, { tenants, apiKeys, serviceToken: deps.serviceToken });
    },
  });
}
