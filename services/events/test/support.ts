// Component-test support: the events service in-process on port 0 against the real local
// PostgreSQL (its own disposable database) and Redis, with access tokens signed here by a test
// key (no auth service needed). Identities are resolved by the REAL contacts service, run as a
// process from its build beside it on its own disposable database (see contacts-process.ts):
// tests create Contacts and organizations through its API, never by writing its tables.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { parseServiceCallers, SCOPES } from '@herald/auth';
import { createPool, type Pool } from '@herald/db';
import { startServer, type Logger, type RunningServer } from '@herald/http';
import { createApiPolicy, DEFAULT_RATE_BUDGETS, type ApiPolicy } from '@herald/policy';
import { createRedis, waitForRedis, type Redis } from '@herald/redis';
import {
  API_TIMESTAMP,
  createTestRequester,
  createTestSigner,
  createTestTenants,
  createTestVerifier,
  prepareTestDatabase,
  signTestAccessToken,
  startStandInServer,
  TEST_AUDIENCE,
  TEST_ISSUER,
  TEST_REDIS_URL,
  testDatabaseUrl,
  uniqueEmail,
  UUID_PATTERN,
  type RequestOptions,
  type TestTenants,
  type TestTokenSigner,
  type TokenOptions,
} from '@herald/testing';
import { createApp, type EventsAppDeps } from '../src/app.js';
import { contactsIdentityResolver } from '../src/identity-projection/clients/contacts-identity-resolver.js';
import {
  freePort,
  prepareContactsDatabase,
  startContactsProcess,
  type ContactsProcess,
} from './contacts-process.js';

export const ADMIN_TOKEN = `test-admin-${randomUUID()}`;
export const SERVICE_TOKEN = `test-service-${randomUUID()}`;
export const ISSUER = TEST_ISSUER;
export const AUDIENCE = TEST_AUDIENCE;
export const ALL_SCOPES: readonly string[] = SCOPES;
export type { RequestOptions, TestTokenSigner, TokenOptions };
export { uniqueEmail };

/**
 * The tests' own databases. Not the stack's `herald_events`: the running relay publishes and
 * deletes outbox rows there, which the tests here read.
 */
const DATABASE = process.env.HERALD_EVENTS_TEST_DATABASE ?? 'herald_events_test';
const CONTACTS_DATABASE = 'herald_events_test_contacts';
export const REDIS_URL = TEST_REDIS_URL;
const MIGRATIONS = fileURLToPath(new URL('../migrations', import.meta.url));
// Serializes test workers while they create or reset a database: the same constant as
// contact-data-support.ts, so the two never race on one database.
const SETUP_LOCK_ID = 7_210_383;

/**
 * Creates the database when missing and migrates it. It is disposable: when a migration changed
 * after it was applied here (migrations are still being written), it is dropped and built again.
 */
export async function prepareDatabase(database: string, migrations = MIGRATIONS): Promise<void> {
  await prepareTestDatabase({
    database,
    migrationsDir: migrations,
    lockId: SETUP_LOCK_ID,
    applicationName: 'events-test',
  });
}

/** A Contact as the contacts service answered its creation. */
export interface TestContact {
  id: string;
  externalId?: string;
  email: string;
}

/** The real contacts service, a process: where the tests' Contacts and organizations live. */
export interface TestContactsService {
  /** Throws before the first request when it starts lazily (see `startContacts`). */
  url: string;
  pool: Pool;
  /** PUT /v1/contacts/{externalId} when an externalId is given, else POST /v1/contacts. */
  createContact(
    tenantId: string,
    fields?: { externalId?: string; email?: string },
  ): Promise<TestContact>;
  /** POST /admin/v1/tenants/{tenantId}/organizations. */
  createOrganization(tenantId: string, externalId: string): Promise<void>;
  /** A request to the contacts service; `token` becomes the Authorization header. */
  request(method: string, path: string, options?: RequestOptions): Promise<Response>;
  close(): Promise<void>;
}

/** The events service; `tenants`, `tokenFor` and `newTenant` as in createTestTenants. */
export interface TestEventsService extends Omit<TestTenants, 'tenantExists'> {
  url: string;
  pool: Pool;
  redis: Redis;
  signer: TestTokenSigner;
  contacts: TestContactsService;
  close(): Promise<void>;
  /** A request to the service; `token` becomes the Authorization header. */
  request(method: string, path: string, options?: RequestOptions): Promise<Response>;
  /** POST /v1/events/{route} with the token and the body as JSON. */
  record(route: string, token: string, body: unknown): Promise<Response>;
  /** GET /admin/v1/... with the admin token (or `token`). */
  adminGet(path: string, token?: string): Promise<Response>;
}

export interface StartOptions {
  /** Where the events service resolves identities (a stand-in); default the contacts process. */
  contactsUrl?: string;
  /** How long the identity lookup may take; default the service's 3 s. */
  contactsTimeoutMs?: number;
  /** The Redis the dedup fast path uses; default the local one. */
  redisUrl?: string;
  dedupWindowMs?: number;
  /** Replaces the default `tenantExists` (membership of `service.tenants`). */
  tenantExists?: EventsAppDeps['tenantExists'];
  /** Any other app dependency (or one added later), passed to createApp as given. */
  deps?: Partial<EventsAppDeps> & Record<string, unknown>;
  poolMax?: number;
  /** The pool's statement timeout; default the service's 10 s. */
  statementTimeoutMs?: number;
  /**
   * Another disposable database (name starting with `herald_events_test`) for a test file that
   * runs an outbox relay, which publishes and deletes the outbox rows other files read.
   */
  database?: string;
  /**
   * The contacts process lists this events service in its CONTACT_DATA_SERVICES, so
   * its export and erasure go through the events service's internal routes (the real seam).
   * Without it the list names a port nothing listens on (contacts refuses to start with none):
   * an export or erasure there is a 503.
   */
  contactDataSeam?: boolean;
  /** The migrations the database gets; default all of the service's. */
  migrationsDir?: string;
}

const silent = () => pino({ level: process.env.EVENTS_TEST_LOG ?? 'silent' });

/**
 * The events service's guard: production budgets on the local Redis, the test signer's
 * tokens. Billing is not part of these tests, so every Tenant is active.
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

// The contacts database is migrated by the service's own command once per test file: each run
// costs a Node start and a Kafka round trip, and a file may start several services.
let contactsDatabaseReady: Promise<void> | undefined;
function prepareContactsDatabaseOnce(): Promise<void> {
  contactsDatabaseReady ??= prepareContactsDatabase(CONTACTS_DATABASE, SETUP_LOCK_ID).catch(
    (err: unknown) => {
      contactsDatabaseReady = undefined;
      throw err;
    },
  );
  return contactsDatabaseReady;
}

/**
 * The real contacts service as a process, on its own disposable database. `lazy`: started on
 * the first createContact, createOrganization or request (the events service resolves
 * identities elsewhere, so most such tests never need it); until then `url` throws.
 */
async function startContacts(
  signer: TestTokenSigner,
  contactDataServiceUrls: readonly string[],
  lazy: boolean,
): Promise<TestContactsService> {
  let running: ContactsProcess | undefined;
  let starting: Promise<ContactsProcess> | undefined;
  const start = () =>
    (starting ??= (async () => {
      await prepareContactsDatabaseOnce();
      running = await startContactsProcess({
        database: CONTACTS_DATABASE,
        signer,
        adminToken: ADMIN_TOKEN,
        serviceToken: SERVICE_TOKEN,
        redisUrl: REDIS_URL,
        contactDataServiceUrls,
        logLevel: process.env.EVENTS_TEST_LOG ?? 'warn',
      });
      return running;
    })());
  if (!lazy) await start();
  // For tests that read its tables; it opens no connection until used.
  const pool = createPool({
    connectionString: testDatabaseUrl(CONTACTS_DATABASE),
    applicationName: 'events-test-contacts',
    max: 10,
  });
  const request: TestContactsService['request'] = async (method, path, options) =>
    createTestRequester((await start()).url)(method, path, options);

  return {
    get url() {
      if (!running) throw new Error('the contacts process starts on its first request');
      return running.url;
    },
    pool,
    async createContact(tenantId, fields = {}) {
      const email = fields.email ?? uniqueEmail();
      const token = signTestAccessToken(signer, tenantId);
      const res =
        fields.externalId === undefined
          ? await request('POST', '/v1/contacts', { token, body: { email } })
          : await request('PUT', `/v1/contacts/${encodeURIComponent(fields.externalId)}`, {
              token,
              body: { email },
            });
      if (res.status !== 201 && res.status !== 200) {
        throw new Error(`creating a contact answered ${res.status}: ${await res.text()}`);
      }
      return res.json<TestContact>();
    },
    async createOrganization(tenantId, externalId) {
      const res = await request('POST', `/admin/v1/tenants/${tenantId}/organizations`, {
        token: ADMIN_TOKEN,
        body: { externalId },
      });
      if (res.status !== 201) {
        throw new Error(`creating an organization answered ${res.status}: ${await res.text()}`);
      }
    },
    request,
    close: async () => {
      // A start still under way is waited for, so no process outlives the tests.
      const started = await starting?.catch(() => undefined);
      await started?.close();
      await pool.end();
    },
  };
}

/** The events service in-process on port 0, with the real contacts service beside it. */
export async function startEventsService(options: StartOptions = {}): Promise<TestEventsService> {
  const database = options.database ?? DATABASE;
  const signer = createTestSigner();
  // The seam needs the events service's address before it listens: a port chosen beforehand.
  const port = options.contactDataSeam ? await freePort() : 0;
  // The contacts process starts (a Node start, about a second) while this database is prepared.
  const [prepared, started] = await Promise.allSettled([
    prepareDatabase(database, options.migrationsDir),
    startContacts(
      signer,
      [`http://127.0.0.1:${options.contactDataSeam ? port : 9}`],
      options.contactsUrl !== undefined,
    ),
  ]);
  if (started.status === 'rejected') throw started.reason;
  const contacts = started.value;
  if (prepared.status === 'rejected') {
    await contacts.close();
    throw prepared.reason;
  }
  const pool = createPool({
    connectionString: testDatabaseUrl(database),
    applicationName: 'events-service-test',
    max: options.poolMax ?? 10,
    ...(options.statementTimeoutMs === undefined
      ? {}
      : { statementTimeoutMillis: options.statementTimeoutMs }),
  });
  const redis = createRedis({ url: options.redisUrl ?? REDIS_URL });
  const logger = silent();
  const { tenants, tenantExists, tokenFor, newTenant } = createTestTenants(signer);
  const app = createApp({
    pool,
    logger,
    policy: testApiPolicy(signer, redis, logger),
    redis,
    resolveIdentities: contactsIdentityResolver({
      contactsUrl: options.contactsUrl ?? contacts.url,
      serviceToken: SERVICE_TOKEN,
      ...(options.contactsTimeoutMs === undefined ? {} : { timeoutMs: options.contactsTimeoutMs }),
    }),
    tenantExists: options.tenantExists ?? tenantExists,
    adminToken: ADMIN_TOKEN,
    // the token the contacts process calls the internal routes with
    serviceCallers: parseServiceCallers(`contacts:${SERVICE_TOKEN}`),
    ...(options.dedupWindowMs === undefined ? {} : { dedupWindowMs: options.dedupWindowMs }),
    ...options.deps,
  });
  let running: RunningServer;
  try {
    if (options.redisUrl === undefined) await waitForRedis(redis);
    running = await startServer(app, { host: '127.0.0.1', port, logger });
  } catch (err) {
    // The contacts process would otherwise outlive the test file.
    await contacts.close();
    await pool.end();
    redis.destroy();
    throw err;
  }
  const request = createTestRequester(running.url);

  return {
    url: running.url,
    pool,
    redis,
    signer,
    contacts,
    tenants,
    close: async () => {
      await running.close();
      await pool.end();
      redis.destroy();
      await contacts.close();
    },
    tokenFor,
    newTenant,
    request,
    record: (route, token, body) => request('POST', `/v1/events/${route}`, { token, body }),
    adminGet: (path, token = ADMIN_TOKEN) => request('GET', `/admin/v1${path}`, { token }),
  };
}

export interface StoredEvent {
  id: string;
  contact_id: string | null;
  organization_external_id: string | null;
  event_name: string;
  occurred_at: Date;
  received_at: Date;
  dedup_key: string | null;
  properties: string | null;
}
export interface StoredClaim {
  dedup_key: string;
  event_id: string;
  claimed_at: Date;
}
export interface StoredEventName {
  name: string;
  first_seen_at: Date;
}
export interface StoredMessage {
  id: string;
  topic: string;
  key: string;
  value: string;
  subject_id: string | null;
}

/** What the service stored for a Tenant, read straight from its tables. */
export async function storedState(pool: Pool, tenantId: string) {
  const [events, claims, names, outbox] = await Promise.all([
    pool.query<StoredEvent>(
      `select id, contact_id, organization_external_id, event_name, occurred_at, received_at,
              dedup_key, properties
       from events where tenant_id = $1 order by received_at, occurred_at, id`,
      [tenantId],
    ),
    pool.query<StoredClaim>(
      'select dedup_key, event_id, claimed_at from dedup_claims where tenant_id = $1 order by dedup_key',
      [tenantId],
    ),
    pool.query<StoredEventName>(
      'select name, first_seen_at from event_names where tenant_id = $1 order by name collate "C"',
      [tenantId],
    ),
    pool.query<StoredMessage>(
      `select id, topic, key, value, subject_id from outbox
       where value::jsonb ->> 'tenantId' = $1 order by id`,
      [tenantId],
    ),
  ]);
  return { events: events.rows, claims: claims.rows, names: names.rows, outbox: outbox.rows };
}

/** RFC 3339 in UTC with milliseconds, as every time in the API. */
export const TIMESTAMP = API_TIMESTAMP;
export const UUID = UUID_PATTERN;

/** A local HTTP server standing in for another service (the seam, never the real thing). */
export const startFakeService = startStandInServer;

/** A steady recording load, from `startRecording` until `stop()`. */
export interface RecordingLoad {
  /** Answers by status, every request counted. */
  statuses: Map<number, number>;
  /** Requests sent so far. */
  sent(): number;
  /** Stops the loops and waits for their requests in flight. */
  stop(): Promise<void>;
}

/**
 * Records single Events for one Contact by id from `workers` loops until stopped: the load a
 * schema change or partition upkeep must not disturb. Each loop pauses `pauseMs` after each
 * answer, so the load stays within the key's rate budget (100/s after a burst of 1,000) however
 * fast the machine.
 */
export function startRecording(
  svc: TestEventsService,
  load: { token: string; contactId: string; eventName: string; workers?: number; pauseMs?: number },
): RecordingLoad {
  const statuses = new Map<number, number>();
  let sent = 0;
  let running = true;
  const worker = async () => {
    while (running) {
      sent += 1;
      const res = await svc.record('by-contact-id', load.token, {
        contactId: load.contactId,
        eventName: load.eventName,
        occurredAt: new Date().toISOString(),
      });
      await res.arrayBuffer();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, load.pauseMs ?? 20));
    }
  };
  const loops = Promise.all(Array.from({ length: load.workers ?? 4 }, worker));
  return {
    statuses,
    sent: () => sent,
    async stop() {
      running = false;
      await loops;
    },
  };
}
