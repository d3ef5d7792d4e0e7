import {
  adminTokenEnv,
  refuseSharedTokens,
  serviceCallersEnv,
  serviceTokenEnv,
  tokenVerifierEnv,
} from '@herald/auth';
import { httpServerEnv, int, loadConfig, secret, url, z } from '@herald/config';
import { databaseEnv } from '@herald/db';
import { localServiceUrl, SERVICE_PORTS } from '@herald/internal-api';
import { kafkaEnv } from '@herald/kafka';
import { redisEnv } from '@herald/redis';
import {
  DEFAULT_EXCHANGE_GUARD_LIMITS as DEFAULT_GUARD,
  type ExchangeGuardLimits,
} from './domain/exchange-guard.js';
import { EVENT_RETENTION_DAYS } from './domain/event-retention.js';

/** What the migration command reads: the database, and Kafka for its topic. */
const setupEnv = {
  ...databaseEnv('postgres://herald@127.0.0.1:55432/herald_auth'),
  ...kafkaEnv,
};

/** Every variable the service reads; its manifest lists them from here. */
export const configSchema = z
  .object({
    ...httpServerEnv(SERVICE_PORTS.auth),
    ...setupEnv,
    DATABASE_POOL_MAX: z.coerce
      .number()
      .int()
      .min(1)
      .default(10)
      .describe('connections per replica'),
    ...adminTokenEnv,
    /** Who may call the internal routes (Tenant lookups, the revocation list). */
    ...serviceCallersEnv,
    /** Its own token for the services it asks to delete a Tenant's data. */
    ...serviceTokenEnv,
    SERVICE_URL_CONTACTS: url(localServiceUrl('contacts')).describe(
      "the contacts service, asked to delete a deleted Tenant's data",
    ),
    SERVICE_URL_EVENTS: url(localServiceUrl('events')).describe(
      "the events service, asked to delete a deleted Tenant's data",
    ),
    SERVICE_URL_BILLING: url(localServiceUrl('billing')).describe(
      "the billing service, asked to delete a deleted Tenant's data",
    ),
    // The revocation takes up to 5 s to reach every replica; a write admitted just before then
    // commits within its statements' 10 s timeouts (docs/operations.md#offboarding-a-tenant).
    TENANT_DELETION_GRACE_SECONDS: int(30, 6).describe(
      "seconds from a Tenant's deletion request to the second pass over its data, which deletes what requests admitted before its keys' revocation reached every replica still wrote; at least 6 ([offboarding](docs/operations.md#offboarding-a-tenant))",
    ),
    // All keys are published in the JWKS so that tokens signed by a previous key verify until
    // they expire.
    AUTH_SIGNING_KEYS: secret().describe(
      'JSON array of private ES256 JWKs, each with a `kid`; the first signs, all are published ([rotation](docs/auth.md#rotating-the-signing-key))',
    ),
    AUTH_ISSUER: tokenVerifierEnv.AUTH_ISSUER,
    AUTH_AUDIENCE: tokenVerifierEnv.AUTH_AUDIENCE,
    HASH_CONCURRENCY: z.coerce
      .number()
      .int()
      .min(1)
      .default(4)
      .describe('argon2id hashes (19 MiB each) running at once per replica; more wait in line'),
    HASH_QUEUE: z.coerce
      .number()
      .int()
      .min(0)
      .default(64)
      .describe('token exchanges waiting for a hash; beyond this, 503 with `Retry-After`'),
    /** The exchange guard's buckets: failed exchanges per ClientID and per client address. */
    ...redisEnv,
    EXCHANGE_GUARD_CLIENT_BURST: z.coerce
      .number()
      .int()
      .min(1)
      .default(DEFAULT_GUARD.client.burst)
      .describe('failed token exchanges one ClientID may have at once before 429'),
    EXCHANGE_GUARD_CLIENT_REFILL_PER_MINUTE: z.coerce
      .number()
      .positive()
      .default(DEFAULT_GUARD.client.refillPerSecond * 60)
      .describe('failed token exchanges a ClientID is allowed again per minute'),
    EXCHANGE_GUARD_ADDRESS_BURST: z.coerce
      .number()
      .int()
      .min(1)
      .default(DEFAULT_GUARD.address.burst)
      .describe(
        'failed token exchanges one client address (IPv6: its /64) may have at once before 429',
      ),
    EXCHANGE_GUARD_ADDRESS_REFILL_PER_MINUTE: z.coerce
      .number()
      .positive()
      .default(DEFAULT_GUARD.address.refillPerSecond * 60)
      .describe('failed token exchanges a client address is allowed again per minute'),
    // Lowering it deletes, at the next sweep, the Events of every Tenant without its own period
    // that are older than the new default.
    EVENT_RETENTION_DAYS_DEFAULT: z.coerce
      .number()
      .int()
      .min(EVENT_RETENTION_DAYS.min)
      .max(EVENT_RETENTION_DAYS.max)
      .default(EVENT_RETENTION_DAYS.default)
      .describe(
        `how long the Events of a Tenant without a retention of its own are kept, in days (${EVENT_RETENTION_DAYS.min} to ${EVENT_RETENTION_DAYS.max}); lowering it deletes their older Events at the next sweep ([operations.md](docs/operations.md#how-long-an-event-is-kept))`,
      ),
  })
  .superRefine(refuseSharedTokens);

export type AuthConfig = Readonly<z.output<typeof configSchema>>;

export function loadAuthConfig(env: Record<string, string | undefined> = process.env): AuthConfig {
  return loadConfig(configSchema, env);
}

/** Every variable the migration command (src/migrate.ts) reads. */
export const migrationConfigSchema = z.object(setupEnv);

export function loadMigrationConfig(env: Record<string, string | undefined> = process.env) {
  return loadConfig(migrationConfigSchema, env);
}

export function exchangeGuardLimits(config: AuthConfig): ExchangeGuardLimits {
  return {
    client: {
      burst: config.EXCHANGE_GUARD_CLIENT_BURST,
      refillPerSecond: config.EXCHANGE_GUARD_CLIENT_REFILL_PER_MINUTE / 60,
    },
    address: {
      burst: config.EXCHANGE_GUARD_ADDRESS_BURST,
      refillPerSecond: config.EXCHANGE_GUARD_ADDRESS_REFILL_PER_MINUTE / 60,
    },
  };
}
