// Started as `node --import @herald/telemetry/register dist/index.js`, so telemetry is
// running before any module here loads. The outbox relay is its own process (relay/main.ts).
import { authTenantDirectory } from '@herald/auth';
import { createPool, databaseConnection } from '@herald/db';
import { createLogger, startServer } from '@herald/http';
import { startPublicApi } from '@herald/policy';
import { redisFromConfig } from '@herald/redis';
import { oldestPendingSeconds } from '@herald/outbox';
import { shutdownTelemetry } from '@herald/telemetry';
import { createApp } from './app.js';
import { loadEventsConfig } from './config.js';
import { contactsIdentityResolver } from './identity-projection/clients/contacts-identity-resolver.js';
import { coalescedIdentityResolver } from './identity-projection/coalesced-identity-resolver.js';
import { projectedIdentityResolver } from './identity-projection/projected-identity-resolver.js';
import { startEventsUpkeep } from './partitions/upkeep-job.js';
import { DAY_MS } from './retention/retention-policy.js';
import { authRetentionSource, longestRetentionDays, sweepRetention } from './retention/sweep.js';
import { createPublishPace } from './recording/publish-pace.js';

const config = loadEventsConfig();
const logger = createLogger({ service: 'events', level: config.LOG_LEVEL });
// TLS as DATABASE_SSL_MODE and DATABASE_CA_FILE say; a mistake in them stops the start here.
const database = databaseConnection(config);
const pool = createPool({
  ...database,
  applicationName: 'herald-events',
  max: config.DATABASE_POOL_MAX,
  // Its hot statements (the identity lookup, the recording functions' own) take arrays: planned
  // for each call's values, the lookup spent three times longer planning than running.
  planOnce: true,
});
// The Contact exports' own connections, one per export streaming at most (EXPORT_MAX_CONCURRENT):
// a slowly read export holds its connection for long, and must never hold one recording needs.
const exportPool = createPool({
  ...database,
  applicationName: 'herald-events-export',
  max: config.EXPORT_MAX_CONCURRENT,
});
// Connects in the background and reconnects forever; while it is away, dedup is PostgreSQL's
// and the rate budgets are not enforced (fail open).
const redis = redisFromConfig(config, { logger });
const publicApi = await startPublicApi(config, { redis, logger });
const pace =
  config.RECORDING_PUBLISH_LAG_LIMIT_MS > 0
    ? createPublishPace({
        lagMs: async () => (await oldestPendingSeconds(pool)) * 1000,
        limitMs: config.RECORDING_PUBLISH_LAG_LIMIT_MS,
        maxGapMs: config.RECORDING_MAX_PUBLISH_GAP_MS,
        onError: (err) => logger.debug({ err }, 'could not read the publish lag'),
      })
    : undefined;
const app = createApp({
  pool,
  logger,
  policy: publicApi.policy,
  redis,
  // The projection (fed by the relay process) first; contacts for the rest, one call per Tenant
  // for the requests that ask in the same turn.
  resolveIdentities: projectedIdentityResolver({
    pool,
    logger,
    fallback: coalescedIdentityResolver(
      contactsIdentityResolver({
        contactsUrl: config.SERVICE_URL_CONTACTS,
        serviceToken: config.SERVICE_TOKEN,
      }),
    ),
  }),
  tenantExists: authTenantDirectory({
    authUrl: config.SERVICE_URL_AUTH,
    serviceToken: config.SERVICE_TOKEN,
  }),
  adminToken: config.ADMIN_TOKEN,
  serviceCallers: config.SERVICE_CALLERS,
  recording: {
    maxBatchEvents: config.RECORDING_MAX_BATCH_EVENTS,
    maxWaitMs: config.RECORDING_MAX_WAIT_MS,
    ...(pace ? { pace } : {}),
  },
  maxBodyBytesInFlight: config.RECORDING_MAX_BODY_BYTES_IN_FLIGHT,
  exportPool,
  exportLimits: {
    maxConcurrent: config.EXPORT_MAX_CONCURRENT,
    maxPerTenant: config.EXPORT_MAX_CONCURRENT_PER_TENANT,
  },
});

// Partitions ahead and retention. Its own connections: a slow drop or sweep never takes one
// recording needs.
const upkeepPool = createPool({ ...database, applicationName: 'herald-events-upkeep', max: 2 });
const retention = authRetentionSource({
  authUrl: config.SERVICE_URL_AUTH,
  serviceToken: config.SERVICE_TOKEN,
});
const upkeep = startEventsUpkeep({
  pool: upkeepPool,
  logger,
  partitionMs: config.EVENTS_PARTITION_DAYS * DAY_MS,
  ahead: config.EVENTS_PARTITIONS_AHEAD,
  intervalMs: config.EVENTS_UPKEEP_INTERVAL_MS,
  // Unknown while auth does not answer: nothing is dropped then.
  longestRetentionMs: () =>
    retention().then(
      (settings) => longestRetentionDays(settings) * DAY_MS,
      () => undefined,
    ),
  afterPartitions: () => sweepRetention({ pool: upkeepPool, retention, logger }),
});

await startServer(app, {
  host: config.HOST,
  port: config.PORT,
  logger,
  shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  handleSignals: true,
  onShutdown: [
    () => Promise.resolve(publicApi.stop()),
    () => Promise.resolve(pace?.stop()),
    () => upkeep.stop(),
    // No request is in flight any more: nothing waits for Redis.
    () => Promise.resolve(redis.destroy()),
    () => pool.end(),
    () => exportPool.end(),
    () => upkeepPool.end(),
    shutdownTelemetry,
  ],
});
