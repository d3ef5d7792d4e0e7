// Starts the contacts service in-process on port 0 against the real local PostgreSQL and
// Kafka, and signs access tokens the way the auth service does (ES256, `at+jwt`), verified
// from a local key set instead of the auth service's JWKS.
import { randomUUID } from 'node:crypto';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT } from 'jose';
import pg from 'pg';
import { pino } from 'pino';
import {
  CLAIMS,
  DEFAULT_AUDIENCE,
  DEFAULT_ISSUER,
  createTokenVerifier,
  type Scope,
} from '@herald/auth';
import { createPool, runMigrations, type Pool } from '@herald/db';
import { startServer } from '@herald/http';
import { createKafka, ensureTopics, type Kafka } from '@herald/kafka';
import { TOPIC_SETTINGS, TOPICS } from '@herald/messages';
import { createApp, type ContactsAppDeps } from '../src/app.js';

export const POSTGRES_URL = process.env.HERALD_POSTGRES_URL ?? 'postgres://herald@127.0.0.1:55432';
export const DATABASE = 'herald_contacts';
export const KAFKA_BROKERS = (process.env.KAFKA_BROKERS ?? '127.0.0.1:59092').split(',');
export const ADMIN_TOKEN = `test-admin-${randomUUID()}`;
export const SERVICE_TOKEN = `test-service-${randomUUID()}`;

export const silentLogger = pino({ level: 'silent' });

export function testKafka(clientId = 'contacts-test'): Kafka {
  return createKafka({ brokers: KAFKA_BROKERS, clientId });
}

/** Creates the database when it is missing; parallel test files may race to do it. */
async function ensureDatabase(): Promise<void> {
  const admin = new pg.Client({ connectionString: `${POSTGRES_URL}/postgres` });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('select 1 from pg_database where datname = $1', [
      DATABASE,
    ]);
    if (rowCount === 0) {
      await admin.query(`create database ${DATABASE}`).catch((err: { code?: string }) => {
        // 42P04 duplicate_database; 23505 when another create won the race on the catalog.
        if (err.code !== '42P04' && err.code !== '23505') throw err;
      });
    }
  } finally {
    await admin.end();
  }
}

async function ensureContactsTopics(): Promise<void> {
  const topics = [TOPICS.contactsChanged, TOPICS.contactsErased].map((topic) => ({
    topic,
    numPartitions: TOPIC_SETTINGS[topic].partitions,
    configEntries: Object.entries(TOPIC_SETTINGS[topic].config).map(([name, value]) => ({
      name,
      value,
    })),
  }));
  const kafka = testKafka('contacts-test-setup');
  try {
    await ensureTopics(kafka, topics);
  } catch {
    // Another test file created them at the same moment: the second look finds them.
    await ensureTopics(kafka, topics);
  }
}

let prepared: Promise<void> | undefined;

/** The database (created and migrated) and the service's Kafka topics, once per test file. */
export function prepareContactsStack(): Promise<void> {
  prepared ??= (async () => {
    await ensureDatabase();
    const pool = createPool({
      connectionString: `${POSTGRES_URL}/${DATABASE}`,
      applicationName: 'contacts-test-migrate',
    });
    try {
      await runMigrations(pool, fileURLToPath(new URL('../migrations', import.meta.url)));
    } finally {
      await pool.end();
    }
    await ensureContactsTopics();
  })();
  return prepared;
}

// One signing key per test file; the verifier gets it as a local key set.
const signingKey = await generateKeyPair('ES256', { extractable: true });
const KID = `test-${randomUUID().slice(0, 8)}`;
const publicJwk = {
  ...(await exportJWK(signingKey.publicKey)),
  kid: KID,
  alg: 'ES256',
  use: 'sig',
};

/** An access token of the Tenant with these scopes, as POST /v1/token would issue it. */
export function tokenFor(
  tenantId: string,
  scopes: readonly Scope[],
  clientId = 'ck_test',
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    [CLAIMS.tenantId]: tenantId,
    [CLAIMS.clientId]: clientId,
    [CLAIMS.scope]: scopes.join(' '),
  })
    .setProtectedHeader({ alg: 'ES256', kid: KID, typ: 'at+jwt' })
    .setIssuer(DEFAULT_ISSUER)
    .setAudience(DEFAULT_AUDIENCE)
    .setSubject(clientId)
    .setJti(randomUUID())
    .setIssuedAt(now)
    .setExpirationTime(now + 900)
    .sign(signingKey.privateKey);
}

export interface TestContactsService {
  url: string;
  pool: Pool;
  close(): Promise<void>;
  /** A request with `Authorization: Bearer <token>` and, when there is a body, JSON. */
  call(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown },
  ): Promise<Response>;
}

export type TestContactsOptions = Partial<Omit<ContactsAppDeps, 'pool' | 'logger' | 'verifier'>>;

/** The contacts service in-process on port 0, against the real local PostgreSQL. */
export async function startContactsService(
  options: TestContactsOptions = {},
): Promise<TestContactsService> {
  await prepareContactsStack();
  const pool = createPool({
    connectionString: `${POSTGRES_URL}/${DATABASE}`,
    applicationName: 'contacts-service-test',
  });
  const verifier = createTokenVerifier({
    jwksUrl: 'http://127.0.0.1:9/unused',
    issuer: DEFAULT_ISSUER,
    audience: DEFAULT_AUDIENCE,
    keySet: createLocalJWKSet({ keys: [publicJwk] }),
  });
  const app = createApp({
    pool,
    logger: silentLogger,
    verifier,
    adminToken: ADMIN_TOKEN,
    serviceToken: SERVICE_TOKEN,
    tenantExists: async () => true,
    ...options,
  });
  const running = await startServer(app, { host: '127.0.0.1', port: 0, logger: silentLogger });
  return {
    url: running.url,
    pool,
    close: async () => {
      await running.close();
      await pool.end();
    },
    call: (method, path, { token, body } = {}) =>
      fetch(`${running.url}${path}`, {
        method,
        headers: {
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
  };
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
