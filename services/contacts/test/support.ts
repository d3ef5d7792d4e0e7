// Component-test support: the contacts service in-process on port 0, against the real local
// PostgreSQL, with access tokens signed here by a test key (no auth service needed).
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { parseServiceCallers } from '@herald/auth';
import { createPool, type Pool } from '@herald/db';
import { startServer, type Logger } from '@herald/http';
import { topicSpecs, TOPICS } from '@herald/messages';
import { createApiPolicy, DEFAULT_RATE_BUDGETS, type ApiPolicy } from '@herald/policy';
import { createRedis, type Redis } from '@herald/redis';
import {
  API_TIMESTAMP,
  createTestRequester,
  createTestSigner,
  createTestTenants,
  createTestVerifier,
  ensureTestTopics,
  prepareTestDatabase,
  startStandInServer,
  TEST_KAFKA_BROKERS,
  TEST_REDIS_URL,
  testDatabaseUrl,
  UUID_PATTERN,
  watchTopics as watchTestTopics,
  type RequestOptions,
  type TestTenants,
  type TestTokenSigner,
  type TopicWatch,
} from '@herald/testing';
import { createApp, type ContactsAppDeps } from '../src/app.js';
import { createIdentityLookupPool } from '../src/data/identity-lookup-pool.js';

export { uniqueEmail } from '@herald/testing';
export type { TopicWatch };

export const ADMIN_TOKEN = `test-admin-${randomUUID()}`;
export const SERVICE_TOKEN = `test-service-${randomUUID()}`;
export const TIMESTAMP = API_TIMESTAMP;
export const UUID = UUID_PATTERN;
export const KAFKA_BROKERS = TEST_KAFKA_BROKERS;

/**
 * The tests' own database. Not the stack's `herald_contacts`: the running contacts service's
 * outbox relay publishes and deletes outbox rows there, which the tests here read.
 */
const DATABASE = process.env.HERALD_CONTACTS_TEST_DATABASE ?? 'herald_contacts_test';
const MIGRATIONS = fileURLToPath(new URL('../migrations', import.meta.url));
// Serializes test workers while they create or reset the database (any constant will do).
const SETUP_LOCK_ID = 7_210_332;

/** The contacts service; `tenants`, `tokenFor` and `newTenant` as in createTestTenants. */
export interface TestContactsService extends Omit<TestTenants, 'tenantExists'> {
  url: string;
  pool: Pool;
  /** The identity lookups' own pool, as the service creates it. */
  identityPool: Pool;
  signer: TestTokenSigner;
  close(): Promise<void>;
  /** A request to the service; `token` becomes the Authorization header. */
  request(method: string, path: string, options?: RequestOptions): Promise<Response>;
  /** POST /admin/v1/... with the admin token (or `token`). */
  admin(path: string, body?: unknown, token?: string): Promise<Response>;
  /** POST /internal/v1/identities/resolve with the service token (or `token`). */
  resolve(body: unknown, token?: string): Promise<Response>;
}

export interface StartOptions {
  /** Replaces the default `tenantExists` (membership of `service.tenants`). */
  tenantExists?: ContactsAppDeps['tenantExists'];
  /** Any other app dependency (or one added later), passed to createApp as given. */
  deps?: Partial<ContactsAppDeps> & Record<string, unknown>;
  poolMax?: number;
  identityPoolMax?: number;
  /**
   * Another disposable database (name starting with `herald_contacts_test`) for a test file
   * that runs an outbox relay, which publishes and deletes the outbox rows other files read.
   */
  database?: string;
}

/**
 * The public routes' guard for component tests: production budgets on the local Redis, the
 * test signer's tokens. Billing is not part of these tests, so every Tenant is active (the
 * billing service and the 402 are tested in services/billing and end to end).
 */
function testApiPolicy(signer: TestTokenSigner, redis: Redis, logger: Logger): ApiPolicy {
  return createApiPolicy({
    verifier: createTestVerifier(signer),
    redis,
    logger,
    budgets: DEFAULT_RATE_BUDGETS,
    subscriptions: {
      fetch: () => Promise.resolve({ state: 'active', consecutiveFailures: 0, version: 0 }),
    },
  });
}

/** The contacts service in-process on port 0, against the real local PostgreSQL. */
export async function startContactsService(
  options: StartOptions = {},
): Promise<TestContactsService> {
  const database = options.database ?? DATABASE;
  await prepareTestDatabase({
    database,
    migrationsDir: MIGRATIONS,
    lockId: SETUP_LOCK_ID,
    applicationName: 'contacts-test',
  });
  const pool = createPool({
    connectionString: testDatabaseUrl(database),
    applicationName: 'contacts-service-test',
    max: options.poolMax ?? 10,
  });
  const identityPool = createIdentityLookupPool(
    { connectionString: testDatabaseUrl(database), ssl: false },
    options.identityPoolMax ?? 4,
  );
  const signer = createTestSigner();
  const logger = pino({ level: process.env.CONTACTS_TEST_LOG ?? 'silent' });
  const { tenants, tenantExists, tokenFor, newTenant } = createTestTenants(signer);
  const redis = createRedis({ url: TEST_REDIS_URL });
  const app = createApp({
    pool,
    identityPool,
    logger,
    policy: testApiPolicy(signer, redis, logger),
    adminToken: ADMIN_TOKEN,
    // its own token, and the one the events service calls its internal route with
    serviceToken: SERVICE_TOKEN,
    serviceCallers: parseServiceCallers(`events:${SERVICE_TOKEN}`),
    tenantExists: options.tenantExists ?? tenantExists,
    ...options.deps,
  });
  const running = await startServer(app, { host: '127.0.0.1', port: 0, logger });
  const request: TestContactsService['request'] = createTestRequester(running.url);

  return {
    url: running.url,
    pool,
    identityPool,
    signer,
    tenants,
    close: async () => {
      await running.close();
      await Promise.all([pool.end(), identityPool.end()]);
      await redis.close();
    },
    tokenFor,
    newTenant,
    request,
    admin: (path, body, token = ADMIN_TOKEN) =>
      request('POST', `/admin/v1${path}`, { token, ...(body === undefined ? {} : { body }) }),
    resolve: (body, token = SERVICE_TOKEN) =>
      request('POST', '/internal/v1/identities/resolve', { token, body }),
  };
}

/** The service's topics, as its setup step (src/migrate.ts) creates them. */
export function ensureContactsTopics(): Promise<void> {
  return ensureTestTopics(
    topicSpecs([TOPICS.contactsChanged, TOPICS.contactsErased]),
    'contacts-test-setup',
  );
}

/** A local HTTP server standing in for another service (the seam, never the real thing). */
export const startFakeService = startStandInServer;

/** Reads the topics from their current end on (see watchTopics in @herald/testing). */
export function watchTopics(topics: readonly string[]): Promise<TopicWatch> {
  return watchTestTopics(topics, { clientId: 'contacts-test-watch', groupPrefix: 'contacts-test' });
}
