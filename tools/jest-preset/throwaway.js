// Throwaway servers for integration tests that cannot use the shared local stack (a TLS
// listener, a user with a password): a private CA made with openssl, free loopback ports, and
// child processes that are stopped, with their files, when the test ends.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect } from '@jest/globals';

const run = promisify(execFile);

/** A fresh folder under the system's temporary folder. */
export function tempDir(prefix) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `herald-${prefix}-`));
}

async function openssl(args, cwd) {
  try {
    await run('openssl', args, { cwd });
  } catch (err) {
    throw new Error(`openssl ${args[0]} failed (is openssl installed?): ${err.stderr || err}`);
  }
}

async function makeCa(dir, name) {
  const key = path.join(dir, `${name}.key`);
  const cert = path.join(dir, `${name}.crt`);
  await openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '2',
      '-subj',
      `/CN=Herald test ${name}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  return { key, cert };
}

/**
 * A CA, a server certificate it signed for localhost and 127.0.0.1 (its key unencrypted,
 * PKCS#8), and a second CA that signed nothing: the one a client must refuse the server with.
 */
export async function createTestPki(dir) {
  const [ca, otherCa] = await Promise.all([makeCa(dir, 'ca'), makeCa(dir, 'other-ca')]);
  const serverKey = path.join(dir, 'server.key');
  const serverCert = path.join(dir, 'server.crt');
  const request = path.join(dir, 'server.csr');
  const extensions = path.join(dir, 'server.ext');
  fs.writeFileSync(
    extensions,
    [
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      '',
    ].join('\n'),
  );
  const subject = ['-subj', '/CN=localhost'];
  const keyArgs = ['-newkey', 'rsa:2048', '-nodes', '-keyout', serverKey];
  await openssl(['req', '-new', ...keyArgs, '-out', request, ...subject], dir);
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      request,
      '-CA',
      ca.cert,
      '-CAkey',
      ca.key,
      '-CAcreateserial',
      '-out',
      serverCert,
      '-days',
      '2',
      '-extfile',
      extensions,
    ],
    dir,
  );
  return { caFile: ca.cert, otherCaFile: otherCa.cert, serverCert, serverKey };
}

/** A loopback port nothing listens on now. */
export async function freePort() {
  const server = net.createServer();
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Starts a program with its output in `logFile`. `uid`/`gid` run it as another user (a
 * PostgreSQL server refuses root). The process group is its own, so stopping it stops its
 * children too.
 */
export function startProcess({ command, args, logFile, cwd, env, uid, gid }) {
  const log = fs.openSync(logFile, 'a');
  const child = spawn(command, args, {
    cwd,
    env: env ?? process.env,
    stdio: ['ignore', log, log],
    detached: true,
    ...(uid === undefined ? {} : { uid, gid }),
  });
  fs.closeSync(log);
  child.exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  child.logFile = logFile;
  return child;
}

/** The last lines of a log, for a failure message. */
export function logTail(logFile, lines = 20) {
  try {
    return fs.readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * Resolves once `check` resolves true; rejects after `timeoutMs`, or at once when `child` exits,
 * with the end of its log.
 */
export async function waitFor(check, { what, timeoutMs = 30_000, child } = {}) {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void child?.exited.then(() => (exited = true));
  for (;;) {
    if (await check().catch(() => false)) return;
    const tail = () => (child ? `\n${logTail(child.logFile)}` : '');
    if (exited) throw new Error(`${what}: the process exited${tail()}`);
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms${tail()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Stops a process group with `signal`, then SIGKILL after `timeoutMs`. */
export async function stopProcess(child, { signal = 'SIGTERM', timeoutMs = 10_000 } = {}) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const kill = (sig) => {
    try {
      process.kill(-child.pid, sig);
    } catch {
      // gone already
    }
  };
  kill(signal);
  const timer = setTimeout(() => kill('SIGKILL'), timeoutMs);
  await child.exited;
  clearTimeout(timer);
}

/**
 * A throwaway CA and certificates for the tests of one file: made before them, removed after.
 * Read `.pki` inside the tests (it is set once the file's beforeAll ran).
 */
export function usePki(prefix) {
  const state = { dir: undefined, pki: undefined };
  beforeAll(async () => {
    state.dir = tempDir(prefix);
    state.pki = await createTestPki(state.dir);
  });
  afterAll(() => {
    if (state.dir) fs.rmSync(state.dir, { recursive: true, force: true });
  });
  return state;
}

/**
 * The message of the error `configure` throws, which must be an `errorType` and must never quote
 * `secret`; fails the test when nothing is thrown.
 */
export function refusalOf(configure, { errorType, secret }) {
  try {
    configure();
  } catch (err) {
    expect(err).toBeInstanceOf(errorType);
    const message = err.message;
    expect(message).not.toContain(secret);
    return message;
  }
  throw new Error('the configuration was accepted');
}
