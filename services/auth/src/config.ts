import {
  adminTokenEnv,
  DEFAULT_AUDIENCE,
  DEFAULT_ISSUER,
  refuseSharedTokens,
  serviceCallersEnv,
} from '@herald/auth';
import { httpServerEnv, loadConfig, secret, z } from '@herald/config';
import { databaseEnv } from '@herald/db';
import { redisEnv } from '@herald/redis';
import {
  DEFAULT_EXCHANGE_GUARD_LIMITS as DEFAULT_GUARD,
  type ExchangeGuardLimits,
} from './domain/exchange-guard.js';

export const DEFAULT_PORT = 18081;

/** What the migration command needs too. */
const setupEnv = databaseEnv('postgres://herald@127.0.0.1:55432/herald_auth');

/** Every variable the service reads; its manifest lists them from here. */
export const configSchema = z
  .object({
    ...httpServerEnv(DEFAULT_PORT),
    ...setupEnv,
    DATABASE_POOL_MAX: z.coerce.number().int().min(1).default(10),
    ...adminTokenEnv,
    /** Who may call the internal routes (Tenant lookups, the revocation list); auth calls none. */
    ...serviceCallersEnv,
    /**
     * JSON array of private ES256 JWKs, each with a `kid`. The first signs; all are published
     * in the JWKS so tokens signed by a previous key verify until they expire (rotation).
     */
    AUTH_SIGNING_KEYS: secret(),
    AUTH_ISSUER: z.string().min(1).default(DEFAULT_ISSUER),
    AUTH_AUDIENCE: z.string().min(1).default(DEFAULT_AUDIENCE),
    /** Slow hashes (argon2id, 19 MiB each) running at once per replica; more wait in line. */
    HASH_CONCURRENCY: z.coerce.number().int().min(1).default(4),
    /** Exchanges waiting for a hash; beyond this, 503 with Retry-After (load is shed). */
    HASH_QUEUE: z.coerce.number().int().min(0).default(64),
    /** The exchange guard's buckets: failed exchanges per ClientID and per client address. */
    ...redisEnv,
    /** Failed exchanges one ClientID may have at once, then one more per 60/refill seconds. */
    EXCHANGE_GUARD_CLIENT_BURST: z.coerce.number().int().min(1).default(DEFAULT_GUARD.client.burst),
    EXCHANGE_GUARD_CLIENT_REFILL_PER_MINUTE: z.coerce
      .number()
      .positive()
      .default(DEFAULT_GUARD.client.refillPerSecond * 60),
    /** Failed exchanges one client address (an IPv6 /64) may have at once, then the refill. */
    EXCHANGE_GUARD_ADDRESS_BURST: z.coerce
      .number()
      .int()
      .min(1)
      .default(DEFAULT_GUARD.address.burst),
    EXCHANGE_GUARD_ADDRESS_REFILL_PER_MINUTE: z.coerce
      .number()
      .positive()
      .default(DEFAULT_GUARD.address.refillPerSecond * 60),
  })
  .superRefine(refuseSharedTokens);

export type AuthConfig = Readonly<z.output<typeof configSchema>>;

export function loadAuthConfig(env: Record<string, string | undefined> = process.env): AuthConfig {
  return loadConfig(configSchema, env);
}

export function loadMigrationConfig(env: Record<string, string | undefined> = process.env) {
  return loadConfig(z.object(setupEnv), env);
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
