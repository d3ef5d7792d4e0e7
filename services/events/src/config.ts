import {
  adminTokenEnv,
  refuseSharedTokens,
  serviceCallersEnv,
  serviceTokenEnv,
} from '@herald/auth';
import { httpServerEnv, loadConfig, url, z } from '@herald/config';
import { databaseEnv } from '@herald/db';
import { localServiceUrl, SERVICE_PORTS } from '@herald/internal-api';
import { kafkaEnv } from '@herald/kafka';
import { MAX_OUTBOX_SHARDS } from '@herald/outbox';
import { publicApiEnv } from '@herald/policy';
import { redisEnv } from '@herald/redis';

/** The outbox relay's port, unless told otherwise: its manifest declares it there too. */
export const RELAY_PORT = 18085;

/** What the migration command and the relay need too. */
const setupEnv = {
  ...databaseEnv('postgres://herald@127.0.0.1:55432/herald_events'),
  ...kafkaEnv,
};

const HOUR_MS = 60 * 60_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * What the migration command sets on the topic it creates (src/topics.ts), and enforces on it
 * again on every run (docs/events.md, docs/contacts.md#kafka).
 */
const topicEnv = {
  // 7 days by default: a consumer may be down that long without losing Events. At most the
  // GDPR's month for an answer: an erased Contact's Events leave Kafka only by this retention.
  KAFKA_EVENTS_RECORDED_RETENTION_MS: z.coerce
    .number()
    .int()
    .min(HOUR_MS, 'must be at least 3600000 (1 hour)')
    .max(30 * DAY_MS, 'must be at most 2592000000 (30 days)')
    .default(7 * DAY_MS)
    .describe(
      "how long Kafka keeps a published Event on `herald.events.recorded` (7 days by default, 1 hour to 30 days): the topic's `retention.ms`; its segments span a seventh of it, at most a day",
    ),
};

/** RECORDING_MAX_BODY_BYTES_IN_FLIGHT's default. */
export const MAX_BODY_BYTES_IN_FLIGHT = 1024 * 1024;

/** Every variable the service reads; its manifest lists them from here. */
export const configSchema = z
  .object({
    ...httpServerEnv(SERVICE_PORTS.events),
    ...setupEnv,
    DATABASE_POOL_MAX: z.coerce
      .number()
      .int()
      .min(1)
      .default(10)
      .describe('connections per replica'),
    RECORDING_MAX_BATCH_EVENTS: z.coerce
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(500)
      .describe(
        'Events written by one batch of concurrent requests at most; a larger request goes alone ([docs/events.md](docs/events.md))',
      ),
    RECORDING_MAX_WAIT_MS: z.coerce
      .number()
      .min(0)
      .max(100)
      .default(1)
      .describe(
        'how long a request may wait for others to share its batch while batches are in flight',
      ),
    // The pace is src/recording/publish-pace.ts.
    RECORDING_PUBLISH_LAG_LIMIT_MS: z.coerce
      .number()
      .int()
      .min(0)
      .max(60_000)
      .default(500)
      .describe(
        'while the oldest Event message not yet published to Kafka has waited longer than this, recording runs one batch at a time with a gap after each, so that publishing catches up; `0` never slows recording ([docs/events.md](docs/events.md))',
      ),
    RECORDING_MAX_PUBLISH_GAP_MS: z.coerce
      .number()
      .int()
      .min(1)
      .max(1_000)
      .default(20)
      .describe('the longest gap recording leaves between batches while publishing is behind'),
    // Bounds the memory recording holds: 1 MiB is about five 1,000-Event arrays, or thousands of
    // single Events.
    RECORDING_MAX_BODY_BYTES_IN_FLIGHT: z.coerce
      .number()
      .int()
      .min(1)
      .default(MAX_BODY_BYTES_IN_FLIGHT)
      .describe(
        'request bodies of the Event routes handled at once per replica, in bytes (`Content-Length`; 1 MiB by default); a request over it waits, unread, until earlier ones are answered ([docs/events.md](docs/events.md))',
      ),
    // Each export holds its connection for as long as its reader takes, from the exports' own
    // pool of exactly this many connections, never from recording's.
    EXPORT_MAX_CONCURRENT: z.coerce
      .number()
      .int()
      .min(1)
      .max(100)
      .default(4)
      .describe(
        "Contact exports streaming at once per replica, all Tenants together (their own pool's size, on top of `DATABASE_POOL_MAX`); beyond it 503 with `Retry-After` ([docs/events.md](docs/events.md#contact-export))",
      ),
    EXPORT_MAX_CONCURRENT_PER_TENANT: z.coerce
      .number()
      .int()
      .min(1)
      .max(100)
      .default(2)
      .describe(
        'Contact exports of one Tenant streaming at once per replica; beyond it 429 with `Retry-After`; above `EXPORT_MAX_CONCURRENT` it acts as `EXPORT_MAX_CONCURRENT`',
      ),
    // Measured (docs/benchmark-findings.md): a week keeps a year of Events in 52 partitions, each
    // dropped whole in milliseconds, while a Contact's export, which plans and probes every
    // partition, stays fast; a day's partitions made it several times slower.
    EVENTS_PARTITION_DAYS: z.coerce
      .number()
      .int()
      .min(1)
      .max(31)
      .default(7)
      .describe(
        'the recording time one partition of the `events` table spans, in days; a change applies to the partitions created after it ([docs/events.md](docs/events.md#partitions))',
      ),
    EVENTS_PARTITIONS_AHEAD: z.coerce
      .number()
      .int()
      .min(1)
      .max(12)
      .default(2)
      .describe('partitions of `events` kept ready after the current one'),
    EVENTS_UPKEEP_INTERVAL_MS: z.coerce
      .number()
      .int()
      .min(10_000)
      .max(86_400_000)
      .default(600_000)
      .describe(
        'how often each replica runs the events database upkeep (partitions ahead, retention); one replica at a time does the work',
      ),
    ...adminTokenEnv,
    /** Its own token for the services it calls; who may call its internal routes. */
    ...serviceTokenEnv,
    ...serviceCallersEnv,
    ...publicApiEnv,
    SERVICE_URL_CONTACTS: url(localServiceUrl('contacts')).describe(
      "the contacts service, which resolves each Event request's identities in one call",
    ),
    /** Rate budgets, the subscription mirror and the dedup fast path. */
    ...redisEnv,
  })
  .superRefine(refuseSharedTokens);

export type EventsConfig = Readonly<z.output<typeof configSchema>>;

export function loadEventsConfig(
  env: Record<string, string | undefined> = process.env,
): EventsConfig {
  return loadConfig(configSchema, env);
}

/** Every variable the migration command (src/migrate.ts) reads. */
export const migrationConfigSchema = z.object({ ...setupEnv, ...topicEnv });

export type MigrationConfig = Readonly<z.output<typeof migrationConfigSchema>>;

export function loadMigrationConfig(
  env: Record<string, string | undefined> = process.env,
): MigrationConfig {
  return loadConfig(migrationConfigSchema, env);
}

/** Every variable the relay process reads. */
export const relayConfigSchema = z.object({
  ...httpServerEnv(RELAY_PORT),
  ...setupEnv,
  OUTBOX_SHARDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_OUTBOX_SHARDS)
    .default(32)
    .describe(
      `how many shards the outbox's messages fall into by key (32 by default, 1 to ${MAX_OUTBOX_SHARDS}): the live relay replicas share them, so up to this many publish at once and any more wait; every replica must have the same value, as relays that see a live one counting differently publish nothing until it is gone`,
    ),
});

export type RelayConfig = Readonly<z.output<typeof relayConfigSchema>>;

/** The outbox relay runs as its own process (its own Deployment): it needs no secrets. */
export function loadRelayConfig(
  env: Record<string, string | undefined> = process.env,
): RelayConfig {
  return loadConfig(relayConfigSchema, env);
}
