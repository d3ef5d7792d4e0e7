// Started as `node --import @herald/telemetry/register dist/index.js`, so telemetry is
// running before any module here loads.
import { authTenantDirectory } from '@herald/auth';
import { createPool, databaseConnection } from '@herald/db';
import { createLogger, startServer } from '@herald/http';
import { createKafka, createProducer, kafkaConnection } from '@herald/kafka';
import { createOutboxRelay } from '@herald/outbox';
import { redisFromConfig } from '@herald/redis';
import { shutdownTelemetry } from '@herald/telemetry';
import { createApp } from './app.js';
import { loadBillingConfig } from './config.js';
import { createSubscriptionMirror } from './domain/redis-mirror.js';
import { manifest } from './manifest.js';

const config = loadBillingConfig();
const logger = createLogger({ service: 'billing', level: config.LOG_LEVEL });
// TLS as DATABASE_SSL_MODE and DATABASE_CA_FILE say; a mistake in them stops the start here.
const database = databaseConnection(config);
const pool = createPool({
  ...database,
  applicationName: 'herald-billing',
  max: config.DATABASE_POOL_MAX,
});
// Connects in the background and reconnects forever; the mirror's loop catches up after.
const redis = redisFromConfig(config, { logger });
const mirror = createSubscriptionMirror({ pool, redis, logger });
const app = createApp({
  pool,
  logger,
  mirror,
  tenantExists: authTenantDirectory({
    authUrl: config.SERVICE_URL_AUTH,
    serviceToken: config.SERVICE_TOKEN,
  }),
  adminToken: config.ADMIN_TOKEN,
  serviceCallers: config.SERVICE_CALLERS,
  suspendAfterFailures: config.BILLING_SUSPEND_AFTER_FAILURES,
});

// Subscription changes leave through the outbox: committed with the change, published after.
const producer = createProducer(
  createKafka({ ...kafkaConnection(config), clientId: 'herald-billing', logger }),
);
const relay = createOutboxRelay({
  pool,
  producer,
  logger,
  name: 'billing',
  topics: manifest.processes[0]!.topics?.produces ?? [],
});
relay.start();
mirror.start();

await startServer(app, {
  host: config.HOST,
  port: config.PORT,
  logger,
  shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  handleSignals: true,
  onShutdown: [
    () => mirror.stop(),
    () => relay.stop(),
    () => producer.close(),
    // No request is in flight any more and the loop has stopped: nothing waits for Redis.
    () => Promise.resolve(redis.destroy()),
    () => pool.end(),
    shutdownTelemetry,
  ],
});
