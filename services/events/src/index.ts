// Started as `node --import @herald/telemetry/register dist/index.js`, so telemetry is
// running before any module here loads. The outbox relay is its own process (relay.ts).
import { authTenantDirectory, createTokenVerifier } from '@herald/auth';
import { createPool } from '@herald/db';
import { createLogger, startServer } from '@herald/http';
import { createRedis } from '@herald/redis';
import { shutdownTelemetry } from '@herald/telemetry';
import { createApp } from './app.js';
import { loadEventsConfig } from './config.js';
import { contactsIdentityResolver } from './domain/identities.js';

const config = loadEventsConfig();
const logger = createLogger({ service: 'events', level: config.LOG_LEVEL });
const pool = createPool({
  connectionString: config.DATABASE_URL,
  applicationName: 'herald-events',
  max: config.DATABASE_POOL_MAX,
});
const verifier = createTokenVerifier({
  jwksUrl: config.AUTH_JWKS_URL,
  issuer: config.AUTH_ISSUER,
  audience: config.AUTH_AUDIENCE,
});
// Connects in the background and reconnects forever; while it is away, dedup is PostgreSQL's.
const redis = createRedis({ url: config.REDIS_URL, clusterNodes: config.REDIS_CLUSTER_NODES });
const app = createApp({
  pool,
  logger,
  verifier,
  redis,
  resolveIdentities: contactsIdentityResolver({
    contactsUrl: config.SERVICE_URL_CONTACTS,
    serviceToken: config.SERVICE_TOKEN,
  }),
  tenantExists: authTenantDirectory({
    authUrl: config.SERVICE_URL_AUTH,
    serviceToken: config.SERVICE_TOKEN,
  }),
  adminToken: config.ADMIN_TOKEN,
  serviceToken: config.SERVICE_TOKEN,
});

await startServer(app, {
  host: config.HOST,
  port: config.PORT,
  logger,
  shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  handleSignals: true,
  onShutdown: [
    // No request is in flight any more: nothing waits for Redis.
    () => Promise.resolve(redis.destroy()),
    () => pool.end(),
    shutdownTelemetry,
  ],
});
