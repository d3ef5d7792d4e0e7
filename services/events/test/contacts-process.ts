// The real contacts service for the events tests, as a process: its built entries
// (`dist/migrate.js`, then `dist/index.js`), run the way the stack runs them, on a scratch
// database. What it asks the auth and billing services is answered by a stand-in started here,
// so no other service has to run and the tests' own signing key is the one it trusts.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { TOKEN_ALGORITHM } from '@herald/auth';
import {
  freeLoopbackPort,
  prepareTestDatabase,
  startStandInServer,
  TEST_AUDIENCE,
  TEST_ISSUER,
  TEST_KAFKA_BROKERS,
  testDatabaseUrl,
  type StandInServer,
  type TestTokenSigner,
} from '@herald/testing';

// Found through the package (a devDependency), so turbo builds it before these tests run.
const CONTACTS_DIR = path.dirname(
  createRequire(import.meta.url).resolve('@herald/contacts-service/package.json'),
);
const MIGRATE_ENTRY = path.join(CONTACTS_DIR, 'dist', 'migrate.js');
const SERVICE_ENTRY = path.join(CONTACTS_DIR, 'dist', 'index.js');
/** How much of a process's output is kept for the error that reports it. */
const OUTPUT_LIMIT = 64 * 1024;
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;

export interface ContactsProcessOptions {
  /** The scratch database, which must already exist (see `prepareContactsDatabase`). */
  database: string;
  signer: TestTokenSigner;
  adminToken: string;
  serviceToken: string;
  redisUrl: string;
  /** CONTACT_DATA_SERVICES: where export and erasure collect the other services' part. */
  contactDataServiceUrls: readonly string[];
  /** Its LOG_LEVEL; what it logs is shown only when it fails. */
  logLevel?: string;
}

export interface ContactsProcess {
  url: string;
  /** SIGTERM (the graceful shutdown the stack uses), SIGKILL if it does not end in time. */
  close(): Promise<void>;
}

/** A loopback port nothing listens on at the moment. */
export const freePort = freeLoopbackPort;

function requireBuilt(entry: string): void {
  if (!existsSync(entry)) {
    throw new Error(
      `${entry} is missing: build the contacts service (npx turbo run build --filter=@herald/contacts-service...)`,
    );
  }
}

/** The environment of a contacts process: the tests' own, minus jest's NODE_OPTIONS. */
function childEnv(vars: Record<string, string>): Record<string, string | undefined> {
  return {
    ...process.env,
    NODE_OPTIONS: undefined,
    OTEL_SDK_DISABLED: 'true',
    ...vars,
  };
}

/** Keeps the tail of a process's stdout and stderr. */
function captureOutput(child: ChildProcess): () => string {
  let output = '';
  const append = (chunk: Buffer) => {
    output += chunk.toString();
    if (output.length > OUTPUT_LIMIT) output = output.slice(-OUTPUT_LIMIT);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  return () => output;
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

/** Runs `node dist/migrate.js` to its end; throws with its output unless it succeeds. */
async function runMigrate(databaseUrl: string): Promise<void> {
  const child = spawn(process.execPath, [MIGRATE_ENTRY], {
    cwd: CONTACTS_DIR,
    env: childEnv({ DATABASE_URL: databaseUrl, KAFKA_BROKERS: TEST_KAFKA_BROKERS.join(',') }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = captureOutput(child);
  const code = await exited(child);
  if (code !== 0) throw new Error(`contacts migrate.js exited ${code}:\n${output()}`);
}

/**
 * Creates the scratch database when missing and migrates it with the service's own migration
 * command (see prepareTestDatabase in @herald/testing). `lockId` serializes test workers.
 */
export async function prepareContactsDatabase(database: string, lockId: number): Promise<void> {
  requireBuilt(MIGRATE_ENTRY);
  await prepareTestDatabase({
    database,
    lockId,
    applicationName: 'events-test-contacts',
    migrate: runMigrate,
  });
}

/**
 * What the contacts process asks the auth and billing services: the JWKS (the test signer's
 * public key), the revocation list (empty), whether a Tenant exists (every one does: Tenants
 * are auth's, not under test here) and a Tenant's subscription (active: billing is tested in
 * services/billing and end to end). The internal routes want the service token, as the real
 * ones do.
 */
function startAuthAndBillingStandIn(
  signer: TestTokenSigner,
  serviceToken: string,
): Promise<StandInServer> {
  const jwks = {
    keys: [
      {
        ...signer.publicKey.export({ format: 'jwk' }),
        kid: 'test',
        alg: TOKEN_ALGORITHM,
        use: 'sig',
      },
    ],
  };
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const { pathname } = new URL(req.url ?? '/', 'http://stand-in');
    if (req.method !== 'GET') return send(res, 405, { error: 'method not allowed' });
    if (pathname === '/.well-known/jwks.json') return send(res, 200, jwks);
    if (req.headers.authorization !== `Bearer ${serviceToken}`) {
      return send(res, 401, { error: 'unauthenticated' });
    }
    if (pathname === '/internal/v1/revoked-keys') return send(res, 200, { clientIds: [] });
    const subscription = /^\/internal\/v1\/tenants\/([^/]+)\/subscription$/.exec(pathname);
    if (subscription) {
      return send(res, 200, { state: 'active', consecutiveFailures: 0, version: 0 });
    }
    const tenant = /^\/internal\/v1\/tenants\/([^/]+)$/.exec(pathname);
    if (tenant) return send(res, 200, { id: decodeURIComponent(tenant[1]!).toLowerCase() });
    return send(res, 404, { error: 'not found' });
  };
  return startStandInServer(handle);
}

/** Resolves once GET /readyz answers 200; rejects when the process ends or time runs out. */
async function waitUntilReady(child: ChildProcess, url: string, output: () => string) {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `the contacts process exited ${child.exitCode ?? child.signalCode} before it was ready:\n${output()}`,
      );
    }
    const ready = await fetch(`${url}/readyz`).then(
      (res) => res.status === 200,
      () => false,
    );
    if (ready) return;
    if (Date.now() > deadline) {
      throw new Error(
        `the contacts process was not ready within ${START_TIMEOUT_MS} ms:\n${output()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * `node --import @herald/telemetry/register dist/index.js`, as the stack and the chart run it,
 * on a free port; resolves once it is ready. Its output is written to stderr if it ends while
 * the tests still use it, so a crash is visible beside the failures it causes.
 */
export async function startContactsProcess(
  options: ContactsProcessOptions,
): Promise<ContactsProcess> {
  requireBuilt(SERVICE_ENTRY);
  const standIn = await startAuthAndBillingStandIn(options.signer, options.serviceToken);
  try {
    // A port chosen beforehand can be taken by another process before the child binds it:
    // one more try with another port.
    for (let attempt = 1; ; attempt++) {
      try {
        return await spawnContacts(options, standIn);
      } catch (err) {
        if (attempt >= 2 || !/EADDRINUSE/.test(String(err))) throw err;
      }
    }
  } catch (err) {
    await standIn.close();
    throw err;
  }
}

async function spawnContacts(
  options: ContactsProcessOptions,
  standIn: StandInServer,
): Promise<ContactsProcess> {
  const port = await freeLoopbackPort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['--import', '@herald/telemetry/register', SERVICE_ENTRY], {
    cwd: CONTACTS_DIR,
    env: childEnv({
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: options.logLevel ?? 'warn',
      DATABASE_URL: testDatabaseUrl(options.database),
      KAFKA_BROKERS: TEST_KAFKA_BROKERS.join(','),
      ADMIN_TOKEN: options.adminToken,
      SERVICE_TOKEN: options.serviceToken,
      // the events service under test calls it with the same token
      SERVICE_CALLERS: `events:${options.serviceToken}`,
      AUTH_JWKS_URL: `${standIn.url}/.well-known/jwks.json`,
      AUTH_ISSUER: TEST_ISSUER,
      AUTH_AUDIENCE: TEST_AUDIENCE,
      SERVICE_URL_AUTH: standIn.url,
      SERVICE_URL_BILLING: standIn.url,
      REDIS_URL: options.redisUrl,
      REDIS_CLUSTER_NODES: '',
      CONTACT_DATA_SERVICES: options.contactDataServiceUrls.join(','),
      // The tests wait for in-flight requests themselves; a stuck one should not hold close().
      SHUTDOWN_TIMEOUT_MS: '2000',
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = captureOutput(child);
  // Set once it was ready: an earlier end is reported by the error the start throws.
  let watching = false;
  let closing = false;
  child.once('exit', (code, signal) => {
    if (!watching || closing) return;
    process.stderr.write(
      `\nthe contacts process (${url}) exited ${code ?? signal} while the tests used it:\n${output()}\n`,
    );
  });
  try {
    await waitUntilReady(child, url, output);
  } catch (err) {
    child.kill('SIGKILL');
    await exited(child);
    throw err;
  }
  watching = true;

  return {
    url,
    close: async () => {
      closing = true;
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await exited(child);
        clearTimeout(timer);
      }
      await standIn.close();
    },
  };
}
