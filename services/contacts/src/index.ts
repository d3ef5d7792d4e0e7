// Started as `node --import @herald/telemetry/register dist/index.js`, so telemetry is
// running before any module here loads.
import { authTenantDirectory } from '@herald/auth';
import { createPool, databaseConnection } from '@herald/db';
import { createLogger, startServer } from '@herald/http';
import { createKafka, createProducer, kafkaConnection } from '@herald/kafka';
import { createOutboxRelay } from '@herald/outbox';
import { startPublicApi } from '@herald/policy';
import { redisFromConfig } from '@herald/redis';
import { shutdownTelemetry } from '@herald/telemetry';
import { createApp } from './app.js';
import { createIdentityLookupPool } from './data/identity-lookup-pool.js';
import { loadContactsConfig } from './config.js';
import { manifest } from './manifest.js';

const config = loadContactsConfig();
const logger = createLogger({ service: 'contacts', level: config.LOG_LEVEL });
// TLS as DATABASE_SSL_MODE and DATABASE_CA_FILE say; a mistake in them stops the start here.
const database = databaseConnection(config);
const pool = createPool({
  ...database,
  applicationName: 'herald-contacts',
  max: config.DATABASE_POOL_MAX,
});
const identityPool = createIdentityLookupPool(database, config.IDENTITY_LOOKUP_POOL_MAX);
const redis = redisFromConfig(config, { logger });
const publicApi = await startPublicApi(config, { redis, logger });
const app = createApp({
  pool,
  identityPool,
  logger,
  policy: publicApi.policy,
  adminToken: config.ADMIN_TOKEN,
  serviceToken: config.SERVICE_TOKEN,
  serviceCallers: config.SERVICE_CALLERS,
  tenantExists: authTenantDirectory({
    authUrl: config.SERVICE_URL_AUTH,
    serviceToken: config.SERVICE_TOKEN,
  }),
  contactDataServiceUrls: config.CONTACT_DATA_SERVICES,
});

// Contact changes leave through the outbox: committed with the change, published after.
const producer = createProducer(
  createKafka({ ...kafkaConnection(config), clientId: 'herald-contacts', logger }),
);
const relay = createOutboxRelay({
  pool,
  producer,
  logger,
  name: 'contacts',
  topics: manifest.processes[0]!.topics?.produces ?? [],
});
relay.start();

await startServer(app, {
  host: config.HOST,
  port: config.PORT,
  logger,
  shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  handleSignals: true,
  onShutdown: [
    () => relay.stop(),
    () => Promise.resolve(publicApi.stop()),
    () => redis.close(),
    () => producer.close(),
    () => Promise.all([pool.end(), identityPool.end()]),
    shutdownTelemetry,
  ],
});
