// Component-test support: the contacts service in-process on port 0, against the real local
// PostgreSQL, with access tokens signed here by a test key (no auth service needed).
import { createSign, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { CLAIMS, createTokenVerifier, SCOPES, TOKEN_ALGORITHM, TOKEN_TYPE } from '@herald/auth';
import { createPool, MigrationError, runMigrations, type Pool } from '@herald/db';
import { startServer } from '@herald/http';
import { createKafka, ensureTopics, type Kafka } from '@herald/kafka';
import { topicSpecs, TOPICS } from '@herald/messages';
import { createApp, type ContactsAppDeps } from '../src/app.js';

export const ADMIN_TOKEN = `test-admin-${randomUUID()}`;
export const SERVICE_TOKEN = `test-service-${randomUUID()}`;
export const ISSUER = 'herald-auth';
export const AUDIENCE = 'herald-api';
export const ALL_SCOPES: readonly string[] = SCOPES;

/**
 * The tests' own database. Not the stack's `herald_contacts`: the running contacts service's
 * outbox relay publishes and deletes outbox rows there, which the tests here read.
 */
const DATABASE = process.env.HERALD_CONTACTS_TEST_DATABASE ?? 'herald_contacts_test';
const SERVER_URL = process.env.HERALD_POSTGRES_URL ?? 'postgres://herald@127.0.0.1:55432';
const MIGRATIONS = fileURLToPath(new URL('../migrations', import.meta.url));
// Serializes test workers while they create or reset the database (any constant will do).
const SETUP_LOCK_ID = 7_210_332;

/**
 * Creates the test database when missing and migrates it. The database is disposable: when a
 * migration changed after it was applied here (migrations are still being written), it is
 * dropped and built again.
 */
async function prepareDatabase(database = DATABASE): Promise<void> {
  const admin = createPool({
    connectionString: `${SERVER_URL}/postgres`,
    applicationName: 'contacts-test-setup',
    max: 1,
  });
  const client = await admin.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [SETUP_LOCK_ID]);
    const exists = async () =>
      (await client.query('select 1 from pg_database where datname = $1', [database])).rowCount ===
      1;
    if (!(await exists())) await client.query(`create database "${database}"`);
    try {
      await migrate(database);
    } catch (err) {
      if (!(err instanceof MigrationError && /changed after it was applied/.test(err.message)))
        throw err;
      await client.query(`drop database "${database}" with (force)`);
      await client.query(`create database "${database}"`);
      await migrate(database);
    }
  } finally {
    await client.query('select pg_advisory_unlock($1)', [SETUP_LOCK_ID]).catch(() => {});
    client.release();
    await admin.end();
  }
}

async function migrate(database: string): Promise<void> {
  const pool = createPool({
    connectionString: `${SERVER_URL}/${database}`,
    applicationName: 'contacts-test-migrate',
    max: 1,
  });
  try {
    await runMigrations(pool, MIGRATIONS);
  } finally {
    await pool.end();
  }
}

/** Signs access tokens exactly as the auth service does (ES256, typ at+jwt), with a test key. */
export interface TestTokenSigner {
  publicKey: KeyObject;
  sign(claims: Record<string, unknown>, header?: Record<string, unknown>): string;
}

function createTestSigner(): TestTokenSigner {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return {
    publicKey,
    sign(claims, header = {}) {
      const input = `${b64({ alg: TOKEN_ALGORITHM, typ: TOKEN_TYPE, kid: 'test', ...header })}.${b64(claims)}`;
      const signature = createSign('SHA256')
        .update(input)
        .sign({ key: privateKey, dsaEncoding: 'ieee-p1363' });
      return `${input}.${signature.toString('base64url')}`;
    },
  };
}

export interface TokenOptions {
  clientId?: string;
  issuer?: string;
  audience?: string;
  /** Seconds from now; negative for an expired token. Default 900. */
  expiresIn?: number;
}

export interface RequestOptions {
  /** A bearer token (a bare token, or a whole Authorization value when it has a space). */
  token?: string;
  /** Sent as JSON with Content-Type application/json unless `headers` or `rawBody` say otherwise. */
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface TestContactsService {
  url: string;
  pool: Pool;
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
  /**
   * Another disposable database (name starting with `herald_contacts_test`) for a test file
   * that runs an outbox relay, which publishes and deletes the outbox rows other files read.
   */
  database?: string;
}

/** The contacts service in-process on port 0, against the real local PostgreSQL. */
export async function startContactsService(
  options: StartOptions = {},
): Promise<TestContactsService> {
  const database = options.database ?? DATABASE;
  await prepareDatabase(database);
  const pool = createPool({
    connectionString: `${SERVER_URL}/${database}`,
    applicationName: 'contacts-service-test',
    max: options.poolMax ?? 10,
  });
  const signer = createTestSigner();
  const logger = pino({ level: process.env.CONTACTS_TEST_LOG ?? 'silent' });
  const tenants = new Set<string>();
  const verifier = createTokenVerifier({
    jwksUrl: 'http://unused.invalid/jwks.json',
    issuer: ISSUER,
    audience: AUDIENCE,
    keySet: async () => signer.publicKey,
  });
  const app = createApp({
    pool,
    logger,
    verifier,
    adminToken: ADMIN_TOKEN,
    serviceToken: SERVICE_TOKEN,
    tenantExists: options.tenantExists ?? (async (tenantId) => tenants.has(tenantId.toLowerCase())),
    ...options.deps,
  });
  const running = await startServer(app, { host: '127.0.0.1', port: 0, logger });

  const tokenFor: TestContactsService['tokenFor'] = (tenantId, scopes = ALL_SCOPES, opts = {}) => {
    const now = Math.floor(Date.now() / 1000);
    const clientId = opts.clientId ?? `ck_test${randomUUID().replaceAll('-', '').slice(0, 16)}`;
    return signer.sign({
      iss: opts.issuer ?? ISSUER,
      aud: opts.audience ?? AUDIENCE,
      sub: clientId,
      jti: randomUUID(),
      iat: now,
      exp: now + (opts.expiresIn ?? 900),
      [CLAIMS.tenantId]: tenantId,
      [CLAIMS.clientId]: clientId,
      [CLAIMS.scope]: scopes.join(' '),
    });
  };

  const request: TestContactsService['request'] = (method, path, opts = {}) => {
    const headers: Record<string, string> = {};
    if (opts.token !== undefined) {
      headers.authorization = opts.token.includes(' ') ? opts.token : `Bearer ${opts.token}`;
    }
    let body: string | undefined = opts.rawBody;
    if (opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.body);
    }
    return fetch(`${running.url}${path}`, {
      method,
      headers: { ...headers, ...opts.headers },
      body,
    });
  };

  return {
    url: running.url,
    pool,
    signer,
    tenants,
    close: async () => {
      await running.close();
      await pool.end();
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

/** RFC 3339 in UTC with milliseconds (decisions A). */
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
  const admin = kafka.admin();
  await admin.connect();
  try {
    for (const topic of topics) {
      const offsets = await admin.fetchTopicOffsets(topic);
      await admin.setOffsets({
        groupId,
        topic,
        partitions: offsets.map((o) => ({ partition: o.partition, offset: o.high })),
      });
    }
  } finally {
    await admin.disconnect();
  }

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
