// Component-test support: the billing service in-process on port 0, against the real local
// PostgreSQL (its own disposable database) and Redis, and a Redis server of its own that a test
// may stop and start.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseServiceCallers, type TenantDirectory } from '@herald/auth';
import { createPool, type Pool } from '@herald/db';
import { createLogger, startServer } from '@herald/http';
import { decodeSnapshot, subscriptionKey, type SubscriptionSnapshot } from '@herald/policy';
import { createRedis, waitForRedis, type Redis, type RedisClient } from '@herald/redis';
import {
  createTestRequester,
  freeLoopbackPort,
  pollUntil,
  prepareTestDatabase,
  TEST_REDIS_URL,
  testDatabaseUrl,
  type RequestOptions,
} from '@herald/testing';
import { createApp } from '../src/app.js';
import { createSubscriptionMirror, type SubscriptionMirror } from '../src/domain/redis-mirror.js';

export const ADMIN_TOKEN = `test-admin-${randomUUID()}`;
export const SERVICE_TOKEN = `test-service-${randomUUID()}`;

/**
 * The tests' own database, not the stack's `herald_billing`: the running billing service's
 * relay would publish and delete the outbox rows the tests read.
 */
const DATABASE = 'herald_billing_test';
const MIGRATIONS = fileURLToPath(new URL('../migrations', import.meta.url));
// Serializes test workers while they create or reset the database (any constant will do).
const SETUP_LOCK_ID = 7_210_384;

export const silentLogger = () =>
  createLogger({ service: 'billing-test', level: process.env.BILLING_TEST_LOG ?? 'silent' });

export interface StartOptions {
  /** Default: the local stack's Redis. */
  redisUrl?: string;
  suspendAfterFailures?: number;
  /** Replaces the default `tenantExists` (membership of `service.tenants`). */
  tenantExists?: TenantDirectory;
  /** Another database (for a file that runs an outbox relay, or one at an unreachable server). */
  databaseUrl?: string;
  /** Runs the mirror's sync loop with this interval; without it the loop does not run. */
  syncIntervalMs?: number;
  poolMax?: number;
}

export interface TestBillingService {
  url: string;
  pool: Pool;
  redis: Redis;
  mirror: SubscriptionMirror;
  tenants: Set<string>;
  /** A new Tenant id that `tenantExists` knows. */
  newTenant(): string;
  request(method: string, path: string, options?: RequestOptions): Promise<Response>;
  /** An operator call with the admin token (or `token`). */
  admin(method: string, path: string, token?: string): Promise<Response>;
  /** POST payment-failures and return the body (throws unless 200). */
  fail(tenantId: string): Promise<{ state: string; consecutiveFailures: number }>;
  /** POST payment-details and return the body (throws unless 200). */
  updateDetails(tenantId: string): Promise<{ state: string; consecutiveFailures: number }>;
  /** The stored row, or undefined. */
  stored(tenantId: string): Promise<StoredRow | undefined>;
  close(): Promise<void>;
}

export interface StoredRow {
  state: string;
  consecutiveFailures: number;
  version: number;
  redisSyncedVersion: number;
}

export async function prepareBillingDatabase(database = DATABASE): Promise<string> {
  await prepareTestDatabase({
    database,
    migrationsDir: MIGRATIONS,
    lockId: SETUP_LOCK_ID,
    applicationName: 'billing-test',
  });
  return testDatabaseUrl(database);
}

export async function startBillingService(options: StartOptions = {}): Promise<TestBillingService> {
  const databaseUrl = options.databaseUrl ?? (await prepareBillingDatabase());
  const pool = createPool({
    connectionString: databaseUrl,
    applicationName: 'billing-service-test',
    max: options.poolMax ?? 10,
    connectionTimeoutMillis: 2_000,
  });
  const redis = createRedis({ url: options.redisUrl ?? TEST_REDIS_URL });
  if (options.redisUrl === undefined) await waitForRedis(redis);
  const logger = silentLogger();
  const mirror = createSubscriptionMirror({
    pool,
    redis,
    logger,
    ...(options.syncIntervalMs === undefined ? {} : { intervalMs: options.syncIntervalMs }),
  });
  if (options.syncIntervalMs !== undefined) mirror.start();
  const tenants = new Set<string>();
  const app = createApp({
    pool,
    logger,
    mirror,
    tenantExists: options.tenantExists ?? (async (tenantId) => tenants.has(tenantId)),
    adminToken: ADMIN_TOKEN,
    // SERVICE_TOKEN is the contacts service's, which may call the internal route
    serviceCallers: parseServiceCallers(`contacts:${SERVICE_TOKEN}`),
    suspendAfterFailures: options.suspendAfterFailures ?? 3,
  });
  const running = await startServer(app, { host: '127.0.0.1', port: 0, logger });
  const request = createTestRequester(running.url);
  const admin = (method: string, p: string, token = ADMIN_TOKEN) =>
    request(method, `/admin/v1/tenants/${p}`, { token });
  const okBody = async (res: Response) => {
    if (res.status !== 200) throw new Error(`answered ${res.status}: ${await res.text()}`);
    return res.json<{ state: string; consecutiveFailures: number }>();
  };

  return {
    url: running.url,
    pool,
    redis,
    mirror,
    tenants,
    newTenant() {
      const tenantId = randomUUID();
      tenants.add(tenantId);
      return tenantId;
    },
    request,
    admin,
    fail: async (tenantId) => okBody(await admin('POST', `${tenantId}/billing/payment-failures`)),
    updateDetails: async (tenantId) =>
      okBody(await admin('POST', `${tenantId}/billing/payment-details`)),
    async stored(tenantId) {
      const { rows } = await pool.query<{
        state: string;
        consecutive_failures: number;
        version: string;
        redis_synced_version: string;
      }>(
        `select state, consecutive_failures, version, redis_synced_version
         from subscriptions where tenant_id = $1`,
        [tenantId],
      );
      const row = rows[0];
      return (
        row && {
          state: row.state,
          consecutiveFailures: row.consecutive_failures,
          version: Number(row.version),
          redisSyncedVersion: Number(row.redis_synced_version),
        }
      );
    },
    async close() {
      await mirror.stop();
      await running.close();
      await pool.end();
      redis.destroy();
    },
  };
}

/** The snapshot Redis holds for the Tenant, or null. */
export async function mirrored(
  redis: Redis,
  tenantId: string,
): Promise<SubscriptionSnapshot | null> {
  return decodeSnapshot(await redis.get(subscriptionKey(tenantId)));
}

/** Polls `check` until it returns true or `timeoutMs` passes; resolves with the elapsed ms. */
export const eventually = (check: () => Promise<boolean>, timeoutMs = 10_000, what = 'condition') =>
  pollUntil(check, { timeoutMs, what });

/**
 * A redis-server of the test's own on a free loopback port, which the test may stop (SIGKILL,
 * so nothing is saved on the way down) and start again. Its data directory survives restarts:
 * a `SAVE` snapshot is what a restarted server comes back with.
 */
export interface OwnRedis {
  url: string;
  start(): Promise<void>;
  kill(): Promise<void>;
  /** A client of its own, for the test's checks (connected while the server runs). */
  client: Redis;
  /** SAVE: what the server comes back with after a kill. */
  save(): Promise<void>;
  close(): Promise<void>;
}

export async function ownRedis(): Promise<OwnRedis> {
  const port = await freeLoopbackPort();
  const dir = mkdtempSync(path.join(tmpdir(), 'billing-test-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const client = createRedis({ url });

  async function start() {
    if (child && child.exitCode === null) return;
    child = spawn(
      process.env.REDIS_SERVER ?? 'redis-server',
      [
        ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir],
        // No automatic snapshots, no AOF: only an explicit SAVE is kept across a restart.
        ...['--save', '', '--appendonly', 'no', '--dbfilename', 'dump.rdb'],
      ],
      { stdio: 'ignore' },
    );
    await waitForRedis(client, 10_000);
  }

  async function kill() {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      running.kill('SIGKILL');
    });
  }

  await start();
  return {
    url,
    start,
    kill,
    client,
    async save() {
      await (client as RedisClient).sendCommand(['SAVE']);
    },
    async close() {
      client.destroy();
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
