// Component-test support: the contacts service in-process on port 0, against the real local
// PostgreSQL, with access tokens signed here by a test key (no auth service needed).
import { randomUUID } from 'node:crypto';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { parseServiceCallers, SCOPES } from '@herald/auth';
import { createPool, type Pool } from '@herald/db';
import { startServer, type Logger } from '@herald/http';
import { createApiPolicy, DEFAULT_RATE_BUDGETS, type ApiPolicy } from '@herald/policy';
import { createRedis, type Redis } from '@herald/redis';
import { createKafka, ensureTopics, type Kafka } from '@herald/kafka';
import { topicSpecs, TOPICS } from '@herald/messages';
import {
  createTestRequester,
  createTestSigner,
  createTestVerifier,
  prepareTestDatabase,
  setGroupOffsetsToEnd,
  signTestAccessToken,
  TEST_AUDIENCE,
  TEST_ISSUER,
  TEST_POSTGRES_URL,
  type RequestOptions,
  type TestTokenSigner,
  type TokenOptions,
} from '@herald/testing';
import { createApp, type ContactsAppDeps } from '../src/app.js';
import { createIdentityLookupPool } from '../src/data/identity-lookup-pool.js';

export const ADMIN_TOKEN = `test-admin-${randomUUID()}`;
export const SERVICE_TOKEN = `test-service-${randomUUID()}`;
export const ISSUER = TEST_ISSUER;
export const AUDIENCE = TEST_AUDIENCE;
export const ALL_SCOPES: readonly string[] = SCOPES;
export type { RequestOptions, TestTokenSigner, TokenOptions };

/**
 * The tests' own database. Not the stack's `herald_contacts`: the running contacts service's
 * outbox relay publishes and deletes outbox rows there, which the tests here read.
 */
const DATABASE = process.env.HERALD_CONTACTS_TEST_DATABASE ?? 'herald_contacts_test';
const MIGRATIONS = fileURLToPath(new URL('../migrations', import.meta.url));
// Serializes test workers while they create or reset the database (any constant will do).
const SETUP_LOCK_ID = 7_210_332;

export interface TestContactsService {
  url: string;
  pool: Pool;
  /** The identity lookups' own pool, as the service creates it. */
  identityPool: Pool;
  signer: TestTokenSigner;
  /** Tenants the operator API's `tenantExists` knows (see `newTenant`). */
  tenants: Set<string>;
  close(): Promise<void>;
  /** An access token for the tenant with these scopes (default: every scope). */
  tokenFor(tenantId: string, scopes?: readonly string[], options?: TokenOptions): string;
  /** A new tenant id, known to `tenantExists`, and a token with every scope for it. */
  newTenant(): { tenantId: string; token: string };
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
export function testApiPolicy(signer: TestTokenSigner, redis: Redis, logger: Logger): ApiPolicy {
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
    connectionString: `${TEST_POSTGRES_URL}/${database}`,
    applicationName: 'contacts-service-test',
    max: options.poolMax ?? 10,
  });
  const identityPool = createIdentityLookupPool(
    { connectionString: `${TEST_POSTGRES_URL}/${database}`, ssl: false },
    options.identityPoolMax ?? 4,
  );
  const signer = createTestSigner();
  const logger = pino({ level: process.env.CONTACTS_TEST_LOG ?? 'silent' });
  const tenants = new Set<string>();
  const redis = createRedis({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:56379' });
  const app = createApp({
    pool,
    identityPool,
    logger,
    policy: testApiPolicy(signer, redis, logger),
    adminToken: ADMIN_TOKEN,
    // its own token, and the one the events service calls its internal route with
    serviceToken: SERVICE_TOKEN,
    serviceCallers: parseServiceCallers(`events:${SERVICE_TOKEN}`),
    tenantExists: options.tenantExists ?? (async (tenantId) => tenants.has(tenantId.toLowerCase())),
    ...options.deps,
  });
  const running = await startServer(app, { host: '127.0.0.1', port: 0, logger });

  const tokenFor: TestContactsService['tokenFor'] = (tenantId, scopes = ALL_SCOPES, opts = {}) =>
    signTestAccessToken(signer, tenantId, scopes, opts);
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
    newTenant: () => {
      const tenantId = randomUUID();
      tenants.add(tenantId);
      return { tenantId, token: tokenFor(tenantId) };
    },
    request,
    admin: (path, body, token = ADMIN_TOKEN) =>
      request('POST', `/admin/v1${path}`, { token, ...(body === undefined ? {} : { body }) }),
    resolve: (body, token = SERVICE_TOKEN) =>
      request('POST', '/internal/v1/identities/resolve', { token, body }),
  };
}

/** RFC 3339 in UTC with milliseconds, as every time in the API. */
export const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A unique email per call, so tests never collide. */
export const uniqueEmail = (label = 'person') => `${label}-${randomUUID().slice(0, 8)}@example.com`;

export const KAFKA_BROKERS = (process.env.KAFKA_BROKERS ?? '127.0.0.1:59092').split(',');

export function testKafka(clientId = 'contacts-test'): Kafka {
  return createKafka({ brokers: KAFKA_BROKERS, clientId });
}

/** The service's topics, as its setup step (src/migrate.ts) creates them. */
export async function ensureContactsTopics(): Promise<void> {
  const topics = topicSpecs([TOPICS.contactsChanged, TOPICS.contactsErased]);
  const kafka = testKafka('contacts-test-setup');
  try {
    await ensureTopics(kafka, topics);
  } catch {
    // Another test file created them at the same moment: the second look finds them.
    await ensureTopics(kafka, topics);
  }
}

/** A local HTTP server standing in for another service (the seam, never the real thing). */
export async function startFakeService(
  handler: RequestListener,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface ReceivedMessage {
  topic: string;
  key: string | null;
  /** The parsed JSON value; null for a tombstone. */
  value: unknown;
  raw: string | null;
}

export interface TopicWatch {
  /** Every message received so far, in arrival order. */
  received: ReceivedMessage[];
  /** Resolves with the first message (already received or still to come) that matches. */
  waitFor(match: (m: ReceivedMessage) => boolean, timeoutMs?: number): Promise<ReceivedMessage>;
  stop(): Promise<void>;
}

/**
 * Reads the topics from their current end on: a fresh consumer group whose offsets are set to
 * each partition's end before it starts, so nothing published after this call is missed (however
 * long the group takes to join) and nothing older is read.
 */
export async function watchTopics(topics: readonly string[]): Promise<TopicWatch> {
  const kafka = testKafka('contacts-test-watch');
  const groupId = `contacts-test-${randomUUID()}`;
  await setGroupOffsetsToEnd(kafka, groupId, topics);

  const received: ReceivedMessage[] = [];
  const waiters = new Set<(m: ReceivedMessage) => void>();
  const consumer = kafka.consumer({ groupId });
  await consumer.connect();
  await consumer.subscribe({ topics: [...topics] });
  await consumer.run({
    eachMessage: async ({ topic, message }) => {
      const raw = message.value === null ? null : message.value.toString('utf8');
      const m = {
        topic,
        key: message.key === null ? null : message.key.toString('utf8'),
        value: raw === null ? null : (JSON.parse(raw) as unknown),
        raw,
      };
      received.push(m);
      for (const waiter of waiters) waiter(m);
    },
  });

  return {
    received,
    waitFor(match, timeoutMs = 20_000) {
      const already = received.find(match);
      if (already) return Promise.resolve(already);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no matching message on ${topics.join(', ')} within ${timeoutMs} ms`));
        }, timeoutMs);
        function waiter(m: ReceivedMessage) {
          if (!match(m)) return;
          clearTimeout(timer);
          waiters.delete(waiter);
          resolve(m);
        }
        waiters.add(waiter);
      });
    },
    stop: () => consumer.disconnect(),
  };
}
