// Herald's own services (the registry in services.mjs) as detached `node <entry>` processes:
// environment, migrations, start, readiness (/readyz), restart after a rebuild, stop.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  databaseUrl,
  findService,
  host,
  kafkaBrokers,
  logDir,
  redisUrl,
  repoRoot,
  runDir,
  stackServices,
  traceSampleRatio,
  tracesUrl,
} from './config.mjs';
import { stackSecrets } from './secrets.mjs';
import { StackError, say } from './output.mjs';
import { ensureDir, exists, newestMtime, readText, sha256 } from './files.mjs';
import { livePid, run, sleep, startDetached, stopProcess } from './processes.mjs';
import { assertPortFree, httpRequest } from './net.mjs';
import { NODE_FLOOR, meetsNodeFloor } from './node-version.mjs';
import { faultProxyOn, isLinkedVariable, linkedVariables } from './toxiproxy.mjs';

// ---------------------------------------------------------------------------------------------
// Environment

function envName(name) {
  return name.toUpperCase().replace(/[^A-Z0-9]+/g, '_');
}

/** The registry entry's `secrets`, checked against the secrets the stack has. */
function serviceSecrets(service) {
  for (const secret of service.secrets) {
    if (!Object.hasOwn(stackSecrets, secret)) {
      throw new StackError(
        service.name,
        `unknown secret ${JSON.stringify(secret)} in its registry entry; one of: ${Object.keys(stackSecrets).join(', ')}`,
      );
    }
  }
  return service.secrets;
}

/**
 * The variables the stack gives a service (before the caller's own environment is applied).
 * @param {string} name
 * @returns {Record<string, string>}
 */
export function stackVariables(name) {
  const service = findService(name);
  const auth = stackServices.find((s) => s.name === 'auth');
  /** @type {Record<string, string>} */
  const vars = {
    HOST: host,
    PORT: String(service.port),
    METRICS_PORT: String(service.metricsPort),
    REDIS_URL: redisUrl,
    KAFKA_BROKERS: kafkaBrokers,
    LOG_LEVEL: 'info',
    // A second relay is another instance of the same service, as a replica in the chart.
    OTEL_SERVICE_NAME: `herald-${service.replicaOf ?? name}`,
  };
  for (const secret of serviceSecrets(service)) vars[secret] = stackSecrets[secret](service);
  if (service.database) vars.DATABASE_URL = databaseUrl(service.database);
  if (auth) vars.AUTH_JWKS_URL = `${auth.url}/.well-known/jwks.json`;
  // Not the relays beyond the first: nothing calls them, and their number is no other process's setting.
  for (const s of stackServices.filter((x) => !x.replicaOf)) {
    vars[`SERVICE_URL_${envName(s.name)}`] = s.url;
  }
  // The services the contacts service asks for a Contact's export and erasure: those that hold
  // data about Contacts and are built (one that is not would make every export a 503).
  vars.CONTACT_DATA_SERVICES = stackServices
    .filter((s) => s.holdsContactData && exists(s.entryPath))
    .map((s) => s.url)
    .join(',');
  // The SDK always runs: it serves the Prometheus endpoint. Spans go to the stack's trace
  // receiver; logs are exported only when OTEL_LOGS_EXPORTER in the caller's shell asks for it.
  const all = { ...vars, ...tracingVariables() };
  // The fault suite's stack: every connection through its own link of the fault proxy.
  return faultProxyOn() ? linkedVariables(name, all) : all;
}

/**
 * Tracing in the local stack: spans exported over OTLP/HTTP (the SDK's default protobuf) to the
 * trace receiver, sampled parent-based with HERALD_TRACE_SAMPLE_RATIO (default 0) for the traces
 * a service begins itself. So by default only a request sent with a sampled `traceparent` is
 * traced, with everything it causes, and the rest costs what unsampled tracing costs. Batches go
 * out every second rather than every 5 s, for a person waiting to see a trace. A caller whose
 * shell names its own collector (OTEL_EXPORTER_OTLP_ENDPOINT) keeps it for traces too; any of
 * these variables set in the caller's shell wins, as for every stack variable.
 * @returns {Record<string, string>}
 */
export function tracingVariables(env = process.env) {
  /** @type {Record<string, string>} */
  const vars = {
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: String(traceSampleRatio),
    OTEL_BSP_SCHEDULE_DELAY: '1000',
  };
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()) {
    vars.OTEL_TRACES_EXPORTER = 'otlp';
    vars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `${tracesUrl}/v1/traces`;
  }
  return vars;
}

/** Per-service values that a parent's variable of the same name must not override: a PORT or
 *  DATABASE_URL in the caller's shell would otherwise send every service to the same place, a
 *  SERVICE_TOKEN give every caller the same token. (Move ports with HERALD_<NAME>_PORT /
 *  HERALD_PG_PORT instead.) */
const PER_SERVICE = new Set([
  'PORT',
  'METRICS_PORT',
  'DATABASE_URL',
  'SERVICE_TOKEN',
  'SERVICE_CALLERS',
]);

/**
 * The full environment of a service process: the caller's environment (`base`, default
 * process.env) passed through, plus the stack's variables where the caller has not set them.
 * The stack's secrets that the service does not list in `secrets` are removed, the caller's
 * included: a signing key or admin token in the caller's shell reaches only the services
 * that list it.
 */
export function serviceEnv(name, base = process.env) {
  const env = { ...base };
  const listed = serviceSecrets(findService(name));
  for (const secret of Object.keys(stackSecrets)) if (!listed.includes(secret)) delete env[secret];
  const linked = faultProxyOn();
  for (const [k, v] of Object.entries(stackVariables(name))) {
    const forced = PER_SERVICE.has(k) || (linked && isLinkedVariable(k));
    if (forced || env[k] === undefined || env[k] === '') env[k] = v;
  }
  return env;
}

function envFingerprint(name, env) {
  const keys = Object.keys(stackVariables(name)).sort();
  return sha256(JSON.stringify(keys.map((k) => [k, env[k]])));
}

// ---------------------------------------------------------------------------------------------
// Processes

/** The service's package folder (nearest package.json above its entry), used as its cwd. */
function packageDir(service) {
  let dir = path.dirname(service.entryPath);
  while (dir.startsWith(repoRoot) && dir !== repoRoot) {
    if (exists(path.join(dir, 'package.json'))) return dir;
    dir = path.dirname(dir);
  }
  return repoRoot;
}

export function servicePid(service) {
  return livePid(service.pidFile, service.entryPath);
}

/** Each node binary's version, asked once per process: every service runs the same binary. */
const nodeVersions = new Map();

/**
 * The Node.js version a running process runs when it is older than NODE_FLOOR (a stack started
 * before the floor moved), else null; null too where /proc cannot tell (not Linux, a binary since
 * replaced).
 */
function olderNode(pid) {
  let exe;
  try {
    exe = fs.readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return null;
  }
  if (!nodeVersions.has(exe)) {
    const r = spawnSync(exe, ['--version'], { encoding: 'utf8', timeout: 10000 });
    const answer = r.status === 0 ? r.stdout.trim() : '';
    nodeVersions.set(exe, /^v\d+\.\d+\.\d+/.test(answer) ? answer : null);
  }
  const version = nodeVersions.get(exe);
  return version && !meetsNodeFloor(version) ? version : null;
}

function readState(service) {
  try {
    return JSON.parse(readText(service.stateFile) ?? 'null');
  } catch {
    return null;
  }
}

/** Newest build output the running process may be older than: its own dist and libs/*\/dist. */
function newestBuild(service) {
  let newest = newestMtime(path.dirname(service.entryPath));
  const libs = path.join(repoRoot, 'libs');
  let names = [];
  try {
    names = fs.readdirSync(libs);
  } catch {
    // no libs yet
  }
  for (const lib of names) newest = Math.max(newest, newestMtime(path.join(libs, lib, 'dist')));
  return newest;
}

export async function serviceReady(service, timeoutMs = 1500) {
  try {
    const res = await httpRequest(`${service.url}/readyz`, {
      timeoutMs,
      headers: { 'User-Agent': 'herald-stack', 'X-Request-Id': 'herald-stack-probe' },
    });
    return res.status === 200;
  } catch {
    return false;
  }
}

function logLine(service, text) {
  fs.appendFileSync(
    service.logFile,
    `\n--- herald stack: ${text} at ${new Date().toISOString()}\n`,
  );
}

async function migrate(service, env, node) {
  if (!service.migratePath || !exists(service.migratePath)) return;
  say(`${service.name}: migrating (${path.relative(repoRoot, service.migratePath)})`);
  logLine(service, `running ${path.relative(repoRoot, service.migratePath)}`);
  const r = await run(node, [service.migratePath], {
    cwd: packageDir(service),
    env,
    appendTo: service.logFile,
    check: false,
    timeoutMs: 10 * 60000,
  });
  if (r.code !== 0) {
    throw new StackError(
      service.name,
      `migration ${service.migrate} failed (${r.signal ?? `exit code ${r.code}`})`,
      {
        logFile: service.logFile,
      },
    );
  }
}

/**
 * Runs the process `niceness` away from the stack's own nice value (0 unless the stack was
 * started under `nice`), also when it was already running. Going lower needs root or
 * CAP_SYS_NICE: without it the process keeps the stack's value, and its log says so.
 */
function applyNiceness(service, pid) {
  if (service.niceness === 0) return;
  const target = Math.min(19, Math.max(-20, os.getPriority() + service.niceness));
  try {
    if (os.getPriority(pid) !== target) os.setPriority(pid, target);
  } catch (err) {
    fs.appendFileSync(
      service.logFile,
      `--- herald stack: could not set nice ${target} (${err.code ?? err.message}); it keeps ${os.getPriority()}\n`,
    );
  }
}

async function startService(service, env, node) {
  const timeoutMs = Number(process.env.HERALD_READY_TIMEOUT_MS) || 60000;
  await startDetached({
    component: service.name,
    cmd: node,
    // The chart's node arguments and nothing more, so what the bench measures is what a pod runs
    // (--enable-source-maps alone held 34 MiB in each process).
    args: [...service.nodeArgs, service.entryPath],
    cwd: packageDir(service),
    env,
    logFile: service.logFile,
    pidFile: service.pidFile,
    banner: `starting ${path.relative(repoRoot, service.entryPath)}`,
    onSpawn: (child) => {
      fs.writeFileSync(
        service.stateFile,
        `${JSON.stringify({ pid: child.pid, startedAt: Date.now(), env: envFingerprint(service.name, env) })}\n`,
      );
      applyNiceness(service, child.pid);
    },
    ready: () => serviceReady(service),
    timeoutMs,
    timeoutMessage: `${service.url}/readyz did not answer 200 within ${timeoutMs / 1000} s`,
  });
}

/**
 * Starts one service unless it is already running; restarts it when `restart`, when its build
 * is newer than the process, or when its stack variables changed. Returns 'started',
 * 'restarted', 'running' or 'not built'.
 */
export async function ensureService(service, { restart = false, node = process.execPath } = {}) {
  ensureDir(runDir);
  ensureDir(logDir);
  if (!exists(service.entryPath)) {
    say(`${service.name}: not built (${service.entry} is missing), skipped`);
    return 'not built';
  }
  const env = serviceEnv(service.name);
  let result = 'started';
  const pid = servicePid(service);
  if (pid) {
    const state = readState(service);
    const older = olderNode(pid);
    const reason = restart
      ? 'requested'
      : !state || newestBuild(service) > state.startedAt
        ? 'the build is newer than the process'
        : state.env !== envFingerprint(service.name, env)
          ? 'its settings changed'
          : older
            ? `it runs on Node ${older}, older than ${NODE_FLOOR}`
            : null;
    if (!reason) {
      if (!(await serviceReady(service))) {
        const ok = await waitReady(service, 30000);
        if (!ok) {
          throw new StackError(
            service.name,
            `running (pid ${pid}) but ${service.url}/readyz does not answer 200`,
            {
              logFile: service.logFile,
            },
          );
        }
      }
      applyNiceness(service, pid);
      return 'running';
    }
    say(`${service.name}: restarting (${reason})`);
    await stopService(service);
    result = 'restarted';
  }
  await assertPortFree(service.name, service.port, service.portEnvVar);
  await assertPortFree(service.name, service.metricsPort, service.metricsPortEnvVar);
  await migrate(service, env, node);
  say(`${service.name}: starting on ${service.url}`);
  await startService(service, env, node);
  return result;
}

async function waitReady(service, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await serviceReady(service)) return true;
    await sleep(250);
  }
  return false;
}

/** SIGTERM to the service's process group, SIGKILL after 10 s. */
export async function stopService(service) {
  const pid = servicePid(service);
  let result = 'not running';
  if (pid) {
    say(`${service.name}: stopping`);
    result = await stopProcess(pid, { signal: 'SIGTERM', timeoutMs: 10000, group: true });
  }
  fs.rmSync(service.pidFile, { force: true });
  fs.rmSync(service.stateFile, { force: true });
  return result;
}

export async function serviceStatus(service) {
  const pid = servicePid(service);
  const built = exists(service.entryPath);
  const ok = pid ? await serviceReady(service) : false;
  return {
    component: service.name,
    state: ok ? 'running' : pid ? 'not ready' : built ? 'stopped' : 'not built',
    pid,
    address: service.url,
    logFile: service.logFile,
    ok,
    expected: built,
  };
}

export { stackServices };
