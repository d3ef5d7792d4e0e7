import {
  adminTokenEnv,
  refuseSharedTokens,
  serviceCallersEnv,
  serviceTokenEnv,
} from '@herald/auth';
import { httpServerEnv, loadConfig, urlList, z } from '@herald/config';
import { databaseEnv } from '@herald/db';
import { SERVICE_PORTS } from '@herald/internal-api';
import { kafkaEnv } from '@herald/kafka';
import { publicApiEnv } from '@herald/policy';
import { redisEnv } from '@herald/redis';

/** What the migration command needs too. */
const setupEnv = {
  ...databaseEnv('postgres://herald@127.0.0.1:55432/herald_contacts'),
  ...kafkaEnv,
};

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

/**
 * What the migration command sets on the topics it creates (src/topics.ts), and enforces on them
 * again on every run (docs/contacts.md#kafka).
 */
const topicEnv = {
  // At least a minute: shorter makes the log cleaner rewrite the topic constantly; at most the
  // GDPR's month for an answer.
  KAFKA_CONTACTS_CHANGED_MAX_COMPACTION_LAG_MS: z.coerce
    .number()
    .int()
    .min(MINUTE_MS, 'must be at least 60000 (1 minute)')
    .max(30 * DAY_MS, 'must be at most 2592000000 (30 days)')
    .default(DAY_MS)
    .describe(
      "how long after an erasure Kafka may still hold the Contact's snapshots on `herald.contacts.changed` (24 h by default, 1 minute to 30 days): the topic's `max.compaction.lag.ms`, half of it its `segment.ms`, as much its `delete.retention.ms` ([docs/contacts.md](docs/contacts.md))",
    ),
};

/** Every variable the service reads; its manifest lists them from here. */
export const configSchema = z
  .object({
    ...httpServerEnv(SERVICE_PORTS.contacts),
    ...setupEnv,
    DATABASE_POOL_MAX: z.coerce
      .number()
      .int()
      .min(1)
      .default(10)
      .describe('connections per replica'),
    // Their own pool: the lookups' statements are planned once per connection there.
    IDENTITY_LOOKUP_POOL_MAX: z.coerce
      .number()
      .int()
      .min(1)
      .max(100)
      .default(4)
      .describe(
        "the events service's identity lookups' own connections per replica, on top of `DATABASE_POOL_MAX` ([docs/contacts.md](docs/contacts.md#identity-resolution-internal))",
      ),
    ...adminTokenEnv,
    /** Its own token for the services it calls; who may call its internal route. */
    ...serviceTokenEnv,
    ...serviceCallersEnv,
    ...publicApiEnv,
    /** Rate budgets and the subscription mirror. */
    ...redisEnv,
    // Required: without them an erasure would answer 204 and leave the Contact's Events behind.
    CONTACT_DATA_SERVICES: urlList()
      .refine(
        (urls) => urls.length > 0,
        'must list the base URLs of the services holding data about Contacts (the events service); without them an erasure would leave their data behind',
      )
      .describe(
        "comma-separated base URLs of the services holding data about Contacts (events): the export streams their lines after the Contact's, an erasure erases there first",
      ),
  })
  .superRefine(refuseSharedTokens);

export type ContactsConfig = Readonly<z.output<typeof configSchema>>;

export function loadContactsConfig(
  env: Record<string, string | undefined> = process.env,
): ContactsConfig {
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
