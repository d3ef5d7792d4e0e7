// PostgreSQL: one cluster in .herald/postgres/data on 127.0.0.1:55432, superuser `herald`,
// trust authentication (loopback only). PostgreSQL refuses to run as root, so as root the data
// folder belongs to the `postgres` OS user and initdb/pg_ctl run through runuser.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import {
  dataDir,
  host,
  logDir,
  portEnvVars,
  ports,
  postgresUser,
  stackServices,
} from './config.mjs';
import { StackError, say } from './output.mjs';
import { ensureDir, ensureTraversable, exists, writeIfChanged } from './files.mjs';
import { cmdline, isAlive, isRoot, lookupUser, readPid, run, waitFor } from './processes.mjs';
import { assertPortFree } from './net.mjs';

const base = path.join(dataDir, 'postgres');
export const postgresPaths = {
  base,
  data: path.join(base, 'data'),
  socketDir: path.join(base, 'run'),
  logFile: path.join(logDir, 'postgres.log'),
};

const component = 'postgres';

/** The OS user the server runs as: `postgres` when we are root, else ourselves (null). */
function osUser() {
  if (!isRoot) return null;
  const user = lookupUser(process.env.HERALD_PG_OS_USER || 'postgres');
  if (!user) {
    throw new StackError(
      component,
      'we are root, and PostgreSQL refuses to run as root, but there is no "postgres" OS user to run it as. ' +
        'Create one (useradd --system --user-group --home-dir /var/lib/postgresql postgres) or set HERALD_PG_OS_USER.',
    );
  }
  return user;
}

/** Environment for PostgreSQL's programs without the caller's PG* variables. */
function pgEnv() {
  /** @type {NodeJS.ProcessEnv} */
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('PG')) env[k] = v;
  return env;
}

function chownTo(user, ...files) {
  if (!user) return;
  for (const f of files) fs.chownSync(f, user.uid, user.gid);
}

function heraldConf() {
  // A Unix socket path must fit in 107 bytes; a deep checkout gets TCP only.
  const sock = path.join(postgresPaths.socketDir, `.s.PGSQL.${ports.postgres}`);
  const socketDirs = Buffer.byteLength(sock) <= 100 ? postgresPaths.socketDir : '';
  return [
    '# Written by tools/stack/src/postgres.mjs on every `up`: change the code, not this file.',
    `listen_addresses = '${host}'`,
    `port = ${ports.postgres}`,
    `unix_socket_directories = '${socketDirs.replace(/'/g, "''")}'`,
    'max_connections = 200',
    // Recording writes into the current partition's indexes and resolves Contacts in the identity
    // projection at random places; with a year of data those outgrow PostgreSQL's 128 MB default,
    // and every page read from the page cache instead costs a copy (docs/capacity.md).
    'shared_buffers = 1GB',
    // Recording writes every Event into indexes at random places (dedup claims are keyed by a
    // hash). The first change to a page after a checkpoint copies the whole page into the WAL,
    // and with the default 1 GB of WAL between checkpoints most of the WAL was such copies.
    'max_wal_size = 4GB',
    'checkpoint_timeout = 15min',
    'wal_compression = lz4',
    "timezone = 'UTC'",
    "log_timezone = 'UTC'",
    "log_line_prefix = '%m [%p] %q%u@%d '",
    // An error's DETAIL, CONTEXT and QUERY can quote a row's values (`Key (tenant_id,
    // email_key)=(…, ada@example.com) already exists.`, `Failing row contains (…)`). The
    // STATEMENT logged with an error is SQL text whose values are all parameters, and parameters
    // are never logged (log_parameter_max_length_on_error 0; no statement logging).
    "log_error_verbosity = 'terse'",
    '',
  ].join('\n');
}

/** Pid of our running postmaster (from postmaster.pid), or null. */
export function postgresPid() {
  const pid = readPid(path.join(postgresPaths.data, 'postmaster.pid'));
  if (!pid || !isAlive(pid)) return null;
  const cl = cmdline(pid);
  if (cl !== null && !/postgres|postmaster/.test(cl)) return null;
  return pid;
}

/** True when a PostgreSQL server answers on our port (SSLRequest gets 'S' or 'N'). */
export function postgresAnswers(timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port: ports.postgres });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => socket.write(Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f])));
    socket.once('data', (d) => done(d[0] === 0x53 || d[0] === 0x4e));
    socket.once('error', () => done(false));
  });
}

async function psql(bins, sql, database = 'postgres') {
  const { stdout } = await run(
    path.join(bins.postgres, 'psql'),
    [
      '-X',
      '-q',
      '-At',
      '-v',
      'ON_ERROR_STOP=1',
      '-h',
      host,
      '-p',
      String(ports.postgres),
      '-U',
      postgresUser,
      '-d',
      database,
      '-c',
      sql,
    ],
    { env: pgEnv(), timeoutMs: 30000 },
  );
  return stdout;
}

async function pgCtl(bins, user, args, opts = {}) {
  return run(path.join(bins.postgres, 'pg_ctl'), args, {
    asUser: user?.name,
    env: pgEnv(),
    cwd: base,
    ...opts,
  });
}

async function initdb(bins, user) {
  const { data } = postgresPaths;
  // A data folder without PG_VERSION is what a failed initdb leaves: start over.
  fs.rmSync(data, { recursive: true, force: true });
  ensureDir(data, 0o700);
  fs.chmodSync(data, 0o700);
  chownTo(user, data);
  const locales = (await run('locale', ['-a'], { check: false }).catch(() => ({ stdout: '' })))
    .stdout;
  const locale = /^C\.utf-?8$/im.test(locales) ? ['--locale=C.UTF-8'] : ['--no-locale'];
  say('postgres: initdb (first start)');
  try {
    await run(
      path.join(bins.postgres, 'initdb'),
      ['-D', data, '-U', postgresUser, '--auth=trust', '-E', 'UTF8', ...locale],
      {
        asUser: user?.name,
        env: pgEnv(),
        cwd: base,
        appendTo: postgresPaths.logFile,
        timeoutMs: 5 * 60000,
      },
    );
  } catch (err) {
    throw new StackError(component, `initdb failed: ${err.message}`, {
      logFile: postgresPaths.logFile,
    });
  }
  fs.appendFileSync(
    path.join(data, 'postgresql.conf'),
    "\n# Herald's local stack settings (port, addresses, socket folder):\ninclude_if_exists = 'herald.conf'\n",
  );
}

/**
 * Starts PostgreSQL if needed and creates every registry service's database.
 * Returns 'started', 'restarted' or 'running'.
 */
export async function ensurePostgres(bins) {
  const user = osUser();
  const { data, socketDir, logFile } = postgresPaths;
  ensureDir(base);
  ensureDir(socketDir, 0o755);
  ensureDir(logDir);
  if (!exists(logFile)) fs.writeFileSync(logFile, '');
  chownTo(user, socketDir, logFile);
  if (user) {
    ensureTraversable(socketDir, dataDir);
    ensureTraversable(logDir, dataDir);
  }

  if (!exists(path.join(data, 'PG_VERSION'))) await initdb(bins, user);
  chownTo(user, data);

  const confFile = path.join(data, 'herald.conf');
  const confChanged = writeIfChanged(confFile, heraldConf(), 0o600);
  chownTo(user, confFile);

  let result = 'running';
  const pid = postgresPid();
  const startArgs = ['-D', data, '-l', logFile, '-w', '-t', '120', '-s'];
  try {
    if (pid && confChanged) {
      say('postgres: settings changed, restarting');
      await pgCtl(bins, user, ['restart', '-m', 'fast', ...startArgs], {
        detached: true,
        timeoutMs: 180000,
      });
      result = 'restarted';
    } else if (!pid) {
      await assertPortFree(component, ports.postgres, portEnvVars.postgres);
      say(`postgres: starting on ${host}:${ports.postgres}`);
      await pgCtl(bins, user, ['start', ...startArgs], { detached: true, timeoutMs: 180000 });
      result = 'started';
    }
    await waitFor(async () => (await psql(bins, 'select 1')).trim() === '1', {
      timeoutMs: 60000,
      what: 'PostgreSQL to answer `select 1`',
    });
  } catch (err) {
    if (err instanceof StackError) throw err;
    throw new StackError(component, err.message, { logFile });
  }

  // One database per registry service that has one.
  const wanted = [...new Set(stackServices.map((s) => s.database).filter(Boolean))];
  if (wanted.length) {
    const have = new Set(
      (await psql(bins, 'select datname from pg_database')).split('\n').map((s) => s.trim()),
    );
    for (const db of wanted) {
      if (have.has(db)) continue;
      if (!/^[a-z_][a-z0-9_]*$/.test(db))
        throw new StackError(component, `bad database name in the registry: ${db}`);
      say(`postgres: creating database ${db}`);
      await psql(bins, `create database "${db}"`);
    }
  }
  return result;
}

export async function stopPostgres(bins) {
  const pid = postgresPid();
  if (!pid) return 'not running';
  const user = isRoot ? lookupUser(process.env.HERALD_PG_OS_USER || 'postgres') : null;
  say('postgres: stopping');
  if (bins?.postgres) {
    const r = await pgCtl(
      bins,
      user,
      ['stop', '-D', postgresPaths.data, '-m', 'fast', '-w', '-t', '60', '-s'],
      {
        check: false,
        timeoutMs: 90000,
      },
    );
    if (r.code === 0) return 'stopped';
  }
  // No pg_ctl (or it failed): the fast-shutdown signal is SIGINT.
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    // gone
  }
  await waitFor(() => !isAlive(pid), { timeoutMs: 60000, what: 'PostgreSQL to stop' });
  return 'stopped';
}

export async function postgresStatus() {
  const pid = postgresPid();
  const answering = pid ? await postgresAnswers() : false;
  return {
    component,
    state: answering ? 'running' : pid ? 'not answering' : 'stopped',
    pid,
    address: `${host}:${ports.postgres}`,
    logFile: postgresPaths.logFile,
    ok: answering,
  };
}
