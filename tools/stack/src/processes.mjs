// Processes of the local stack: local users, finding and running commands, pid files, starting
// daemons detached and stopping them. Node built-ins only.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { readText } from './files.mjs';
import { StackError } from './output.mjs';

export const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** {uid, gid, home} of a local user from /etc/passwd, or null. */
export function lookupUser(name) {
  const passwd = readText('/etc/passwd') ?? '';
  for (const line of passwd.split('\n')) {
    const f = line.split(':');
    if (f[0] === name) return { name, uid: Number(f[2]), gid: Number(f[3]), home: f[5] };
  }
  return null;
}

export function which(name, extraDirs = []) {
  const dirs = (process.env.PATH || '').split(path.delimiter).filter(Boolean).concat(extraDirs);
  for (const dir of dirs) {
    const p = path.join(dir, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * @typedef {object} RunOptions
 * @property {string} [cwd]
 * @property {NodeJS.ProcessEnv} [env]
 * @property {boolean} [inherit] output to our stdout/stderr instead of captured
 * @property {boolean} [check] reject when the command exits non-zero (default true)
 * @property {string | Buffer} [input] written to its stdin
 * @property {number} [timeoutMs] SIGKILL after this long (0: never)
 * @property {string} [asUser] a local user to run it as
 * @property {boolean} [detached]
 * @property {string} [appendTo] a file its stdout and stderr are appended to
 */
/**
 * @typedef {object} RunResult
 * @property {number} code
 * @property {NodeJS.Signals | null} signal
 * @property {string} stdout
 * @property {string} stderr
 */

/**
 * Runs a command and resolves {code, stdout, stderr}. Rejects when it exits non-zero unless
 * `check: false`. Output is captured unless `inherit` (then it goes to our stdout/stderr).
 * `asUser` runs it as that local user (only when we are root) with runuser, or setpriv.
 * `detached` starts it in its own session, so that a Ctrl-C in our terminal does not reach
 * daemons it leaves behind (pg_ctl start).
 * @param {string} cmd
 * @param {string[]} [args]
 * @param {RunOptions} [opts]
 * @returns {Promise<RunResult>} rejected with an Error carrying `result` when checked
 */
export function run(cmd, args = [], opts = {}) {
  const {
    cwd,
    env = process.env,
    inherit = false,
    check = true,
    input,
    timeoutMs = 0,
    asUser,
    detached = false,
    appendTo,
  } = opts;
  let file = cmd;
  let argv = args;
  if (asUser && isRoot) {
    const runuser = which('runuser', ['/usr/sbin', '/sbin']);
    if (runuser) {
      file = runuser;
      argv = ['-u', asUser, '--', cmd, ...args];
    } else {
      file = which('setpriv', ['/usr/bin']) || 'setpriv';
      argv = ['--reuid', asUser, '--regid', asUser, '--init-groups', '--', cmd, ...args];
    }
  }
  return new Promise((resolve, reject) => {
    let outFd;
    /** @type {import('node:child_process').StdioOptions} */
    let stdio;
    if (appendTo) {
      outFd = fs.openSync(appendTo, 'a');
      stdio = [input === undefined ? 'ignore' : 'pipe', outFd, outFd];
    } else if (inherit) {
      stdio = [input === undefined ? 'ignore' : 'pipe', 'inherit', 'inherit'];
    } else {
      stdio = [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'];
    }
    let child;
    try {
      child = spawn(file, argv, { cwd, env, stdio, detached });
    } catch (err) {
      if (outFd !== undefined) fs.closeSync(outFd);
      reject(err);
      return;
    }
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d) => (stdout += d));
    child.stderr?.on('data', (d) => (stderr += d));
    if (input !== undefined) child.stdin?.end(input);
    let timer;
    if (timeoutMs > 0) {
      timer = setTimeout(() => {
        try {
          child.kill('SIGKILL');
        } catch {
          // gone
        }
      }, timeoutMs);
    }
    child.on('error', (/** @type {NodeJS.ErrnoException} */ err) => {
      clearTimeout(timer);
      if (outFd !== undefined) fs.closeSync(outFd);
      reject(err.code === 'ENOENT' ? new Error(`command not found: ${file}`) : err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (outFd !== undefined) fs.closeSync(outFd);
      const result = { code: code ?? 128, signal, stdout, stderr };
      if (check && code !== 0) {
        const shown = [file, ...argv].join(' ');
        const out = `${stdout}${stderr}`.trim().split('\n').slice(-30).join('\n');
        const message = `\`${shown}\` ${signal ? `was killed by ${signal}` : `exited with ${code}`}${out ? `:\n${out}` : ''}`;
        reject(Object.assign(new Error(message), { result }));
      } else resolve(result);
    });
  });
}

export function isAlive(pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** The command line of a live process (Linux /proc), or null. */
export function cmdline(pid) {
  const raw = readText(`/proc/${pid}/cmdline`);
  return raw === null ? null : raw.split('\0').filter(Boolean).join(' ');
}

/** Reads the first line of a pid file as a pid; null when missing or garbage. */
export function readPid(file) {
  const text = readText(file);
  if (!text) return null;
  const pid = Number(text.trim().split(/\s+/)[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/** A pid from `file` that is alive and (on Linux) whose command line contains `mustContain`. */
export function livePid(file, mustContain) {
  const pid = readPid(file);
  if (!pid || !isAlive(pid)) return null;
  if (mustContain) {
    const cl = cmdline(pid);
    if (cl !== null && !cl.includes(mustContain)) return null;
  }
  return pid;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a truthy value; rejects after `timeoutMs`. */
export async function waitFor(
  fn,
  { timeoutMs = 30000, intervalMs = 200, what = 'condition' } = {},
) {
  const deadline = Date.now() + timeoutMs;
  let lastErr;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      if (err instanceof StackError) throw err;
      lastErr = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}${lastErr ? ` (${lastErr.message})` : ''}`,
      );
    }
    await sleep(intervalMs);
  }
}

/**
 * @typedef {object} DaemonStart
 * @property {string} component the component a StackError names
 * @property {string} [label] the process in "<label> exited during start-up"
 * @property {string} cmd
 * @property {string[]} [args]
 * @property {string} [cwd]
 * @property {NodeJS.ProcessEnv} [env]
 * @property {string} logFile
 * @property {string} pidFile
 * @property {string} banner
 * @property {(child: import('node:child_process').ChildProcess) => void} [onSpawn]
 * @property {() => unknown} ready truthy, or a promise of it, once the daemon serves
 * @property {number} timeoutMs
 * @property {number} [intervalMs]
 * @property {string} timeoutMessage
 */

/**
 * Starts a daemon and waits until it is ready: `cmd args` detached (its own process group, so a
 * Ctrl-C in our terminal does not reach it), stdout and stderr appended to `logFile` after a
 * `--- herald stack: <banner>` line, its pid written to `pidFile`, then `onSpawn(child)`. Polls
 * `ready()` every `intervalMs` until it resolves truthy. Throws a StackError with the log when
 * the process exits first (removing `pidFile`; "<label> exited during start-up (...)") or when
 * `timeoutMs` passes (`timeoutMessage`). Resolves the child's pid.
 * @param {DaemonStart} start
 * @returns {Promise<number>}
 */
export async function startDetached({
  component,
  label,
  cmd,
  args = [],
  cwd,
  env = process.env,
  logFile,
  pidFile,
  banner,
  onSpawn,
  ready,
  timeoutMs,
  intervalMs = 200,
  timeoutMessage,
}) {
  const out = fs.openSync(logFile, 'a');
  let child;
  try {
    fs.writeSync(out, `\n--- herald stack: ${banner} at ${new Date().toISOString()}\n`);
    child = spawn(cmd, args, { cwd, env, detached: true, stdio: ['ignore', out, out] });
  } finally {
    fs.closeSync(out);
  }
  let exitInfo = null;
  child.once('exit', (code, signal) => (exitInfo = signal ?? `exit code ${code}`));
  child.once('error', (err) => (exitInfo = err.message));
  child.unref();
  fs.writeFileSync(pidFile, `${child.pid}\n`);
  onSpawn?.(child);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exitInfo || !isAlive(child.pid)) {
      fs.rmSync(pidFile, { force: true });
      const what = label ? `${label} exited` : 'exited';
      throw new StackError(component, `${what} during start-up (${exitInfo ?? 'gone'})`, {
        logFile,
      });
    }
    if (await ready()) return child.pid;
    if (Date.now() > deadline) throw new StackError(component, timeoutMessage, { logFile });
    await sleep(intervalMs);
  }
}

/**
 * Stops a process: `signal`, then SIGKILL after `timeoutMs`. `group` signals its whole process
 * group (for processes we started detached, which lead their own group).
 */
export async function stopProcess(
  pid,
  { signal = 'SIGTERM', timeoutMs = 10000, group = false } = {},
) {
  if (!isAlive(pid)) return 'not running';
  const send = (sig) => {
    try {
      process.kill(group ? -pid : pid, sig);
    } catch (err) {
      if (group && err.code === 'ESRCH') {
        try {
          process.kill(pid, sig);
        } catch {
          // gone
        }
      }
    }
  };
  send(signal);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid) || isZombie(pid)) return 'stopped';
    await sleep(100);
  }
  send('SIGKILL');
  await waitFor(() => !isAlive(pid) || isZombie(pid), {
    timeoutMs: 5000,
    what: `pid ${pid} to exit`,
  });
  return 'killed';
}

function isZombie(pid) {
  const stat = readText(`/proc/${pid}/stat`);
  if (!stat) return false;
  return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
}
