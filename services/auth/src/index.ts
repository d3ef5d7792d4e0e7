// Started as `node --import @herald/telemetry/register dist/index.js`, so telemetry is
// running before any module here loads.
import { createPool, databaseConnection } from '@herald/db';
import { createLogger, startServer } from '@herald/http';
import { createKafka, createProducer, kafkaConnection } from '@herald/kafka';
import { createOutboxRelay } from '@herald/outbox';
import { redisFromConfig } from '@herald/redis';
import { shutdownTelemetry } from '@herald/telemetry';
import { createApp } from './app.js';
import { tenantDataServices } from './clients/tenant-data-services.js';
import { exchangeGuardLimits, loadAuthConfig } from './config.js';
import { createExchangeGuard } from './domain/exchange-guard.js';
import { argon2Hasher, boundedHasher } from './domain/secret-hasher.js';
import { createTokenSigner } from './domain/signing-keys.js';
import { createTenantDeleter } from './domain/tenant-deletion.js';
import { manifest } from './manifest.js';

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
// Tenant deletions: run by the replica that took the DELETE, resumed by the sweep (here at start
// and every 30 s) when a replica stopped halfway.
const tenantDeleter = createTenantDeleter({
  pool,
  logger,
  // contacts first: its unsent snapshots go before the events service's identity projection.
  services: tenantDataServices(
    {
      contacts: config.SERVICE_URL_CONTACTS,
      events: config.SERVICE_URL_EVENTS,
      billing: config.SERVICE_URL_BILLING,
    },
    config.SERVICE_TOKEN,
  ),
  graceMs: config.TENANT_DELETION_GRACE_SECONDS * 1000,
});
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
  eventRetentionDefaultDays: config.EVENT_RETENTION_DAYS_DEFAULT,
  tenantDeleter,
});

// A deletion's announcement leaves through the outbox: committed with its last step, published
// after (the producer connects on its first send, so a Kafka outage never stops the start).
const producer = createProducer(
  createKafka({ ...kafkaConnection(config), clientId: 'herald-auth', logger }),
);
const relay = createOutboxRelay({
  pool,
  producer,
  logger,
  name: 'auth',
  topics: manifest.processes[0]!.topics?.produces ?? [],
});
relay.start();
tenantDeleter.start();

await startServer(app, {
  host: config.HOST,
  port: config.PORT,
  logger,
  shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  handleSignals: true,
  onShutdown: [
    () => tenantDeleter.stop(),
    () => relay.stop(),
    () => producer.close(),
    () => pool.end(),
    () => Promise.resolve(redis.destroy()),
    shutdownTelemetry,
  ],
});
