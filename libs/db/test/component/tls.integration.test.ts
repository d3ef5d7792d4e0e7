// PostgreSQL over TLS, verified, as managed offerings serve it: a throwaway server (Debian's
// binaries, as the local stack runs them) with ssl=on, a certificate for localhost and 127.0.0.1
// from a CA made here, and a pg_hba.conf that admits TLS connections only. It listens on
// 127.0.0.2 too, an address its certificate does not name.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  createTestPki,
  freePort,
  startProcess,
  stopProcess,
  tempDir,
  waitFor,
  type TestPki,
  type TestProcess,
} from '@herald/jest-preset/throwaway';
import pg from 'pg';
import {
  createPool,
  databaseConnection,
  migrateDatabase,
  type DatabaseConfig,
  type Pool,
} from '../../src/index.js';

const run = promisify(execFile);

/** The newest /usr/lib/postgresql/<version>/bin (Debian's layout), or HERALD_PG_BIN. */
function postgresBin(): string {
  if (process.env.HERALD_PG_BIN) return process.env.HERALD_PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root)
    ? fs.readdirSync(root).filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
    : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) throw new Error(`no PostgreSQL under ${root}: install Debian's postgresql package`);
  return path.join(root, newest, 'bin');
}

/** PostgreSQL refuses to run as root: as root, the `postgres` OS user runs it. */
async function serverUser(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const id = async (flag: string) => Number((await run('id', [flag, 'postgres'])).stdout.trim());
  return { uid: await id('-u'), gid: await id('-g') };
}

let dir: string;
let pki: TestPki;
let port: number;
let server: TestProcess | undefined;
const pools: Pool[] = [];

const urlAt = (host: string) => `postgres://herald@${host}:${port}/postgres`;

function pool(config: DatabaseConfig): Pool {
  const made = createPool({
    ...databaseConnection(config),
    applicationName: 'db-tls-test',
    connectionTimeoutMillis: 5_000,
  });
  pools.push(made);
  return made;
}

beforeAll(async () => {
  dir = tempDir('pg-tls');
  pki = await createTestPki(dir);
  port = await freePort();
  const bin = postgresBin();
  const user = await serverUser();
  const data = path.join(dir, 'data');
  if (user) {
    for (const file of [dir, ...fs.readdirSync(dir).map((f) => path.join(dir, f))]) {
      fs.chownSync(file, user.uid, user.gid);
    }
  }
  // PostgreSQL refuses a key file that others may read.
  fs.chmodSync(pki.serverKey, 0o600);
  await run(
    path.join(bin, 'initdb'),
    ['-D', data, '-U', 'herald', '--auth=trust', '-E', 'UTF8', '--no-locale'],
    { cwd: dir, ...user },
  );
  fs.writeFileSync(
    path.join(data, 'pg_hba.conf'),
    'hostssl all all 127.0.0.1/32 trust\nhostssl all all 127.0.0.2/32 trust\n',
  );
  server = startProcess({
    command: path.join(bin, 'postgres'),
    args: [
      '-D',
      data,
      '-c',
      `port=${port}`,
      '-c',
      'listen_addresses=127.0.0.1,127.0.0.2',
      '-c',
      'unix_socket_directories=',
      '-c',
      'ssl=on',
      '-c',
      `ssl_cert_file=${pki.serverCert}`,
      '-c',
      `ssl_key_file=${pki.serverKey}`,
      '-c',
      'fsync=off',
      '-c',
      'max_connections=20',
    ],
    cwd: dir,
    logFile: path.join(dir, 'postgres.log'),
    ...user,
  });
  const ca = fs.readFileSync(pki.caFile, 'utf8');
  await waitFor(
    async () => {
      const client = new pg.Client({ connectionString: urlAt('127.0.0.1'), ssl: { ca } });
      await client.connect();
      await client.end();
      return true;
    },
    { what: 'the TLS PostgreSQL to accept a connection', child: server },
  );
}, 60_000);

afterAll(async () => {
  await Promise.all(pools.map((p) => p.end().catch(() => {})));
  // SIGINT: PostgreSQL's fast shutdown.
  await stopProcess(server, { signal: 'SIGINT' });
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}, 30_000);

const sslOf = async (p: Pool) =>
  (await p.query<{ ssl: boolean }>('select ssl from pg_stat_ssl where pid = pg_backend_pid()'))
    .rows[0]?.ssl;

describe('PostgreSQL with TLS (verify-full and a CA)', () => {
  it('when DATABASE_SSL_MODE=verify-full and DATABASE_CA_FILE are set, then queries run over verified TLS', async () => {
    const verified = pool({
      DATABASE_URL: urlAt('127.0.0.1'),
      DATABASE_SSL_MODE: 'verify-full',
      DATABASE_CA_FILE: pki.caFile,
    });
    expect(await sslOf(verified)).toBe(true);
  });

  it('when the URL carries sslmode=verify-full and sslrootcert, then the same works by host name', async () => {
    const root = encodeURIComponent(pki.caFile);
    const verified = pool({
      DATABASE_URL: `${urlAt('localhost')}?sslmode=verify-full&sslrootcert=${root}`,
    });
    expect(await sslOf(verified)).toBe(true);
  });

  it('when a service migrates, then the migration runs over TLS too', async () => {
    const migrations = path.join(dir, 'migrations');
    fs.mkdirSync(migrations, { recursive: true });
    fs.writeFileSync(path.join(migrations, '001_first.sql'), 'create table tls_probe (id int);');
    const logger = { info: () => {} };
    const applied = await migrateDatabase({
      ...databaseConnection({
        DATABASE_URL: urlAt('127.0.0.1'),
        DATABASE_SSL_MODE: 'verify-full',
        DATABASE_CA_FILE: pki.caFile,
      }),
      directory: migrations,
      applicationName: 'db-tls-test-migrate',
      logger,
    });
    expect(applied).toEqual(['001_first.sql']);
  });

  it('when the CA is another one, then the connection is refused: the certificate is not trusted', async () => {
    const wrongCa = pool({
      DATABASE_URL: urlAt('127.0.0.1'),
      DATABASE_SSL_MODE: 'verify-full',
      DATABASE_CA_FILE: pki.otherCaFile,
    });
    await expect(wrongCa.query('select 1')).rejects.toThrow(
      /unable to verify the first certificate/,
    );
  });

  it('when the server is reached by an address its certificate does not name, then verify-full refuses and verify-ca accepts', async () => {
    const byName = pool({
      DATABASE_URL: urlAt('127.0.0.2'),
      DATABASE_SSL_MODE: 'verify-full',
      DATABASE_CA_FILE: pki.caFile,
    });
    await expect(byName.query('select 1')).rejects.toThrow(
      /IP: 127\.0\.0\.2 is not in the cert's list/,
    );
    const chainOnly = pool({
      DATABASE_URL: urlAt('127.0.0.2'),
      DATABASE_SSL_MODE: 'verify-ca',
      DATABASE_CA_FILE: pki.caFile,
    });
    expect(await sslOf(chainOnly)).toBe(true);
  });

  it('when TLS is off (the local default), then this server refuses the plain connection', async () => {
    const plain = pool({ DATABASE_URL: urlAt('127.0.0.1') });
    await expect(plain.query('select 1')).rejects.toThrow(/no encryption/);
  });
});
