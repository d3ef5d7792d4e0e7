import {
  adminTokenEnv,
  refuseSharedTokens,
  serviceCallersEnv,
  tokenVerifierEnv,
} from '@herald/auth';
import { httpServerEnv, loadConfig, secret, z } from '@herald/config';
import { databaseEnv } from '@herald/db';
import { SERVICE_PORTS } from '@herald/internal-api';
import { redisEnv } from '@herald/redis';
import {
  DEFAULT_EXCHANGE_GUARD_LIMITS as DEFAULT_GUARD,
  type ExchangeGuardLimits,
} from './domain/exchange-guard.js';

/** What the migration command reads. */
const setupEnv = databaseEnv('postgres://herald@127.0.0.1:55432/herald_auth');

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
    /** Who may call the internal routes (Tenant lookups, the revocation list); auth calls none. */
    ...serviceCallersEnv,
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
