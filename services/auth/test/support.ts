import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { parseServiceCallers } from '@herald/auth';
import { createPool, runMigrations, type Pool } from '@herald/db';
import { startServer, type RunningServer } from '@herald/http';
import { createRedis } from '@herald/redis';
import {
  createTestRequester,
  TEST_AUDIENCE,
  TEST_ISSUER,
  TEST_REDIS_URL,
  testDatabaseUrl,
} from '@herald/testing';
import { createApp } from '../src/app.js';
import {
  createExchangeGuard,
  DEFAULT_EXCHANGE_GUARD_LIMITS,
  type ExchangeGuardLimits,
} from '../src/domain/exchange-guard.js';
import { EVENT_RETENTION_DAYS } from '../src/domain/event-retention.js';
import { argon2Hasher, type SecretHasher } from '../src/domain/secret-hasher.js';
import { createTokenSigner, type TokenSigner } from '../src/domain/signing-keys.js';
import { createTenantDeleter, type TenantDeleter } from '../src/domain/tenant-deletion.js';
import type { TenantDataService } from '../src/clients/tenant-data-services.js';

export const ADMIN_TOKEN = `test-admin-${randomUUID()}`;
export const SERVICE_TOKEN = `test-service-${randomUUID()}`;
/** The events service's token: the one caller of the Event retention route. */
export const EVENTS_SERVICE_TOKEN = `test-events-${randomUUID()}`;
export const ISSUER = TEST_ISSUER;
export const AUDIENCE = TEST_AUDIENCE;
export { basicAuthorization as basic } from '@herald/testing';

/** A private ES256 JWK as the local stack generates them. */
export function newSigningJwk(kid = randomUUID().slice(0, 8)) {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { ...privateKey.export({ format: 'jwk' }), kid };
}

/** Counts verifications, so tests can prove the slow hash ran without timing anything. */
export function countingHasher(): SecretHasher & { verifications: number } {
  const hasher = {
    verifications: 0,
    hash: (secret: string) => argon2Hasher.hash(secret),
    verify: async (hash: string, secret: string) => {
      hasher.verifications += 1;
      return argon2Hasher.verify(hash, secret);
    },
  };
  return hasher;
}

export interface TestAuthService {
  url: string;
  pool: Pool;
  signer: TokenSigner;
  hasher: ReturnType<typeof countingHasher>;
  close(): Promise<void>;
  admin(path: string, body?: unknown): Promise<Response>;
  /** Any request to the service; `token` becomes the Authorization header. */
  request: ReturnType<typeof createTestRequester>;
  /** What runs the Tenant deletions the DELETE marks (no sweep runs unless a test starts it). */
  tenantDeleter: TenantDeleter;
}

export interface StartOptions {
  signingKeys?: object[];
  /** The exchange guard's limits; default the production settings. */
  guardLimits?: ExchangeGuardLimits;
  /** The guard's Redis; default the local one. */
  redisUrl?: string;
  /** EVENT_RETENTION_DAYS_DEFAULT; default the setting's. */
  eventRetentionDefaultDays?: number;
  /** The services a Tenant's deletion asks to delete its data; default none. */
  tenantDataServices?: TenantDataService[];
  /** From a Tenant's deletion request to its second pass; default 0. */
  tenantDeletionGraceMs?: number;
}

/**
 * The auth service in-process on port 0, against the real local PostgreSQL and Redis. Its
 * exchange guard has Redis keys of its own, so test files (and the stack's auth service, which
 * sees the same 127.0.0.1) never share a client address's allowance.
 */
export async function startAuthService(options: StartOptions = {}): Promise<TestAuthService> {
  const signingKeys = options.signingKeys ?? [newSigningJwk()];
  const pool = createPool({
    connectionString: testDatabaseUrl('herald_auth'),
    applicationName: 'auth-service-test',
  });
  await runMigrations(pool, fileURLToPath(new URL('../migrations', import.meta.url)));
  const signer = await createTokenSigner({
    signingKeysJson: JSON.stringify(signingKeys),
    issuer: ISSUER,
    audience: AUDIENCE,
  });
  const hasher = countingHasher();
  const logger = pino({ level: 'silent' });
  const redis = createRedis({ url: options.redisUrl ?? TEST_REDIS_URL });
  const tenantDeleter = createTenantDeleter({
    pool,
    logger,
    services: options.tenantDataServices ?? [],
    graceMs: options.tenantDeletionGraceMs ?? 0,
    retryDelayMs: 50,
  });
  const app = await createApp({
    pool,
    logger,
    signer,
    hasher,
    adminToken: ADMIN_TOKEN,
    // SERVICE_TOKEN is the contacts service's, which may call the tenant and revocation routes
    serviceCallers: parseServiceCallers(`contacts:${SERVICE_TOKEN},events:${EVENTS_SERVICE_TOKEN}`),
    exchangeGuard: createExchangeGuard({
      redis,
      logger,
      limits: options.guardLimits ?? DEFAULT_EXCHANGE_GUARD_LIMITS,
      keyPrefix: `herald-test-${randomUUID()}`,
    }),
    eventRetentionDefaultDays: options.eventRetentionDefaultDays ?? EVENT_RETENTION_DAYS.default,
    tenantDeleter,
  });
  const running: RunningServer = await startServer(app, { host: '127.0.0.1', port: 0, logger });
  const request = createTestRequester(running.url);
  return {
    url: running.url,
    pool,
    signer,
    hasher,
    request,
    tenantDeleter,
    close: async () => {
      await running.close();
      await tenantDeleter.stop();
      await pool.end();
      await redis.close();
    },
    admin: (path, body) => request('POST', `/admin/v1${path}`, { token: ADMIN_TOKEN, body }),
  };
}
