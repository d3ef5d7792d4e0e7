// The restore drill's PostgreSQL side: a base backup of the stack's running cluster, what its
// label and manifest say, and a second server started on the restored copy. The stack's own
// server is only read from. As root, everything here runs as the OS user the stack runs
// PostgreSQL as (PostgreSQL refuses to run as root), so the restored files belong to it.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { host, ports, postgresUser } from '@herald/stack/config.mjs';
import { freePort } from '@herald/stack/net.mjs';
import { isRoot, lookupUser, run, which } from '@herald/stack/processes.mjs';
import { findBinaries } from '@herald/stack/system-packages.mjs';

/**
 * @typedef {object} Backup
 * @property {string} dir        the restored data folder
 * @property {number} startedAt  when pg_basebackup was started (ms since the epoch)
 * @property {number} endedAt    when it had exited, the backup complete
 * @property {string} startLsn   the label's START WAL LOCATION
 * @property {string} startTime  the label's START TIME (the server's clock)
 * @property {string} endLsn     the manifest's last WAL range's End-LSN: recovery replays to it
 * @property {number} bytes      the size of what was copied
 *
 * @typedef {import('./undo.mjs').Undo} Undo
 *
 * @typedef {object} RestoredServer
 * @property {number} port
 * @property {(database: string) => string} databaseUrl
 */

/** The folder of PostgreSQL's programs, found as the stack finds them. */
function postgresBin() {
  const dir = findBinaries().postgres;
  if (!dir) throw new Error('PostgreSQL is not installed: `npm start` installs it');
  return dir;
}

/** The OS user PostgreSQL runs as: `postgres` when we are root, else ourselves (null). */
function osUser() {
  if (!isRoot) return null;
  const name = process.env.HERALD_PG_OS_USER || 'postgres';
  const user = lookupUser(name);
  if (!user) throw new Error(`we are root and there is no "${name}" OS user to run PostgreSQL as`);
  return user;
}

/** Environment for PostgreSQL's programs without the caller's PG* variables. */
function pgEnv() {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PG')));
}

/**
 * A folder for the drill's files (`mode` 0700), owned by PostgreSQL's OS user.
 * @param {string} dir
 */
export function makeScratch(dir) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const user = osUser();
  if (user) fs.chownSync(dir, user.uid, user.gid);
}

/** @param {string} dir */
function sizeOf(dir) {
  let bytes = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) bytes += fs.statSync(path.join(entry.parentPath, entry.name)).size;
  }
  return bytes;
}

/**
 * What the backup's label and manifest say of where it starts and ends.
 * @param {string} dir
 */
export function backupPoints(dir) {
  const label = fs.readFileSync(path.join(dir, 'backup_label'), 'utf8');
  const field = (/** @type {string} */ name) =>
    new RegExp(`^${name}: (.+)$`, 'm').exec(label)?.[1].trim() ?? '?';
  /** @type {{ 'WAL-Ranges': { 'End-LSN': string }[] }} */
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'backup_manifest'), 'utf8'));
  return {
    startLsn: field('START WAL LOCATION').split(' ')[0],
    startTime: field('START TIME'),
    endLsn: manifest['WAL-Ranges'].at(-1)?.['End-LSN'] ?? '?',
  };
}

/**
 * Starts a PostgreSQL program as `asUser` (through runuser, as the stack does) in a process group
 * of its own: `stop` ends it and what it forked (pg_basebackup streams the WAL from a child).
 * @param {string} file
 * @param {string[]} args
 * @param {{ asUser?: string, cwd: string }} options
 */
function startGroup(file, args, { asUser, cwd }) {
  const runuser = asUser ? which('runuser', ['/usr/sbin', '/sbin']) : null;
  if (asUser && !runuser) throw new Error(`no runuser to run ${path.basename(file)} as ${asUser}`);
  const [cmd, argv] = runuser
    ? [runuser, ['-u', String(asUser), '--', file, ...args]]
    : [file, args];
  const child = spawn(cmd, argv, {
    cwd,
    env: pgEnv(),
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  /** @type {Promise<void>} */
  const done = new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (code === 0) resolve();
      else {
        const how = signal ? `was ended by ${signal}` : `exited with ${code}`;
        reject(new Error(`${path.basename(file)} ${how}: ${stderr.trim().slice(-2000)}`));
      }
    });
  });
  const stop = async () => {
    try {
      process.kill(-(child.pid ?? 0), 'SIGTERM');
    } catch {
      // gone already
    }
    await done.catch(() => {});
  };
  return { done, stop };
}

/**
 * A base backup of the stack's cluster into `dir` (which must not exist yet), plain format, with
 * the WAL it needs streamed beside it (`-X stream`) and an immediate checkpoint (a spread one
 * waits for most of checkpoint_timeout). Checked with pg_verifybackup before it is used. While
 * it runs, `undo` can end it.
 * @param {string} dir
 * @param {Undo} undo
 * @returns {Promise<Backup>}
 */
export async function takeBaseBackup(dir, undo) {
  const bin = postgresBin();
  const options = { asUser: osUser()?.name, cwd: path.dirname(dir) };
  /**
   * @param {string} program
   * @param {string[]} args
   */
  const runOnce = async (program, args) => {
    const { done, stop } = startGroup(path.join(bin, program), args, options);
    undo.push(stop);
    try {
      await done;
    } finally {
      undo.remove(stop);
    }
  };
  const startedAt = Date.now();
  await runOnce('pg_basebackup', [
    ...['-h', host, '-p', String(ports.postgres), '-U', postgresUser],
    ...['-D', dir, '-F', 'p', '-X', 'stream', '-c', 'fast', '-w'],
  ]);
  const endedAt = Date.now();
  await runOnce('pg_verifybackup', ['-q', dir]);
  return { dir, startedAt, endedAt, ...backupPoints(dir), bytes: sizeOf(dir) };
}

/**
 * A second PostgreSQL on the restored folder: on a free loopback port, TCP only (no socket
 * beside the stack's), its log in `logFile`. It replays the streamed WAL before it answers. Its
 * stop is in `undo` from before it starts.
 * @param {string} dir
 * @param {string} logFile
 * @param {Undo} undo
 * @param {number} [port]  its port (default: a free one)
 * @returns {Promise<RestoredServer>}
 */
export async function startRestoredServer(dir, logFile, undo, port = undefined) {
  const bin = postgresBin();
  port ??= await freePort();
  const pgCtl = (/** @type {string[]} */ args, /** @type {boolean} */ detached) =>
    run(path.join(bin, 'pg_ctl'), ['-D', dir, ...args], {
      asUser: osUser()?.name,
      env: pgEnv(),
      cwd: path.dirname(dir),
      timeoutMs: 180_000,
      check: false,
      detached,
    });
  undo.push(() => pgCtl(['stop', '-m', 'fast', '-w', '-t', '60', '-s'], false));
  // The copied herald.conf names the stack's port and socket folder: the command line wins.
  const options = `-c port=${port} -c listen_addresses=${host} -c unix_socket_directories=''`;
  // Detached: a Ctrl-C in the terminal reaches the drill, which stops the server itself.
  const started = await pgCtl(
    ['-l', logFile, '-o', options, '-w', '-t', '120', '-s', 'start'],
    true,
  );
  if (started.code !== 0) {
    const log = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').slice(-2000) : '';
    throw new Error(`the restored PostgreSQL did not start:\n${started.stderr}${log}`);
  }
  return {
    port,
    databaseUrl: (database) =>
      `postgres://${postgresUser}@${host}:${port}/${encodeURIComponent(database)}`,
  };
}

/**
 * A new, empty cluster in `dir` (initdb, as PostgreSQL's OS user), with the stack's superuser
 * trusted on loopback and `settings` appended to its postgresql.conf.
 * @param {string} dir
 * @param {string[]} settings  lines such as `max_wal_size = 48MB`
 */
export async function initCluster(dir, settings = []) {
  const bin = postgresBin();
  const asUser = osUser()?.name;
  await run(
    path.join(bin, 'initdb'),
    ['-D', dir, '-U', postgresUser, '--auth=trust', '-E', 'UTF8', '--no-sync'],
    { asUser, env: pgEnv(), cwd: path.dirname(dir), timeoutMs: 120_000 },
  );
  fs.appendFileSync(path.join(dir, 'postgresql.conf'), `\n${settings.join('\n')}\n`);
}

/**
 * A database on a server the drill started.
 * @param {number} port
 * @param {string} database
 */
export async function createDatabase(port, database) {
  await run(
    path.join(postgresBin(), 'createdb'),
    ['-h', host, '-p', String(port), '-U', postgresUser, database],
    { env: pgEnv(), timeoutMs: 60_000 },
  );
}
