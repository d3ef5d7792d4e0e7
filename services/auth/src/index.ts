// Started as `node --import @herald/telemetry/register dist/index.js`, so telemetry is
// running before any module here loads.
import { createPool, databaseConnection } from '@herald/db';
import { createLogger, startServer } from '@herald/http';
import { redisFromConfig } from '@herald/redis';
import { shutdownTelemetry } from '@herald/telemetry';
import { createApp } from './app.js';
import { exchangeGuardLimits, loadAuthConfig } from './config.js';
import { createExchangeGuard } from './domain/exchange-guard.js';
import { argon2Hasher, boundedHasher } from './domain/secret-hasher.js';
import { createTokenSigner } from './domain/signing-keys.js';

const config = loadAuthConfig();
const logger = createLogger({ service: 'auth', level: config.LOG_LEVEL });
// TLS as DATABASE_SSL_MODE and DATABASE_CA_FILE say; a mistake in them stops the start here.
const database = databaseConnection(config);
const pool = createPool({
  ...database,
  applicationName: 'herald-auth',
  max: config.DATABASE_POOL_MAX,
});
const signer = await createTokenSigner({
  signingKeysJson: config.AUTH_SIGNING_KEYS,
  issuer: config.AUTH_ISSUER,
  audience: config.AUTH_AUDIENCE,
});
// Connects in the background; while Redis is away, failed exchanges are not limited.
const redis = redisFromConfig(config, { logger });
const app = await createApp({
  pool,
  logger,
  signer,
  hasher: boundedHasher(argon2Hasher, {
    concurrency: config.HASH_CONCURRENCY,
    queue: config.HASH_QUEUE,
  }),
  adminToken: config.ADMIN_TOKEN,
  serviceCallers: config.SERVICE_CALLERS,
  exchangeGuard: createExchangeGuard({ redis, limits: exchangeGuardLimits(config), logger }),
});

await startServer(app, {
  host: config.HOST,
  port: config.PORT,
  logger,
  shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  handleSignals: true,
  onShutdown: [() => pool.end(), () => Promise.resolve(redis.destroy()), shutdownTelemetry],
});
