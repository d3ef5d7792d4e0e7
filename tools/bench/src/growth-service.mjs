// The events service as the stack runs it (its entry, node arguments and environment), once per
// scratch database of the growth benchmark, on free loopback ports: recording is measured
// through its own code path, wrk sending straight to it, and the Contact export through its
// internal route. Nothing publishes a scratch database's outbox, so recording is never slowed
// for publishing lag (RECORDING_PUBLISH_LAG_LIMIT_MS=0); its upkeep runs once, at its start.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { dataDir, host, serviceEnv, services } from '@herald/stack/index.mjs';
import { tailFile } from '@herald/stack/files.mjs';
import { freePort, httpRequest } from '@herald/stack/net.mjs';
import { startDetached, stopProcess } from '@herald/stack/processes.mjs';
import { stats } from './lib.mjs';

/**
 * One events service process on a scratch database.
 * @typedef {{ url: string, pid: number, callerToken: string, logFile: string,
 *   stop: () => Promise<void> }} EventsProcess
 */

/**
 * Starts the events service on `databaseUrl`; resolves once its /readyz answers 200. Its internal
 * routes accept one caller, `contacts`, with a token made here for this run.
 * @param {{ name: string, databaseUrl: string, node: string }} options
 * @returns {Promise<EventsProcess>}
 */
export async function startEvents({ name, databaseUrl, node }) {
  const service = services.find((s) => s.name === 'events');
  if (!service || !fs.existsSync(service.entryPath)) {
    throw new Error('services/events is not built: run `npm run build`');
  }
  const [port, metricsPort] = [await freePort(), await freePort()];
  const url = `http://${host}:${port}`;
  const callerToken = randomBytes(32).toString('base64url');
  const logFile = path.join(dataDir, 'bench', `growth-${name}.log`);
  const pidFile = path.join(dataDir, 'bench', `growth-${name}.pid`);
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  // This run's log only: a service's every request is a line.
  fs.rmSync(logFile, { force: true });
  const env = {
    ...serviceEnv('events'),
    PORT: String(port),
    METRICS_PORT: String(metricsPort),
    DATABASE_URL: databaseUrl,
    SERVICE_CALLERS: `contacts:${callerToken}`,
    RECORDING_PUBLISH_LAG_LIMIT_MS: '0',
    // Once at the start (the partitions are there already); the benchmark times its own runs.
    EVENTS_UPKEEP_INTERVAL_MS: '86400000',
    OTEL_SERVICE_NAME: `herald-events-bench-${name}`,
  };
  const ready = async () => {
    try {
      return (await httpRequest(`${url}/readyz`, { timeoutMs: 1500 })).status === 200;
    } catch {
      return false;
    }
  };
  const pid = await startDetached({
    component: 'bench growth',
    label: `the events service on ${name}`,
    cmd: node,
    args: [...service.nodeArgs, service.entryPath],
    cwd: path.resolve(path.dirname(service.entryPath), '..'),
    env,
    logFile,
    pidFile,
    banner: `the events service on ${databaseUrl}`,
    ready,
    timeoutMs: 60_000,
    timeoutMessage: `${url}/readyz did not answer 200 within 60 s`,
  }).catch((/** @type {Error} */ err) => {
    throw new Error(`${err.message}; its log ends:\n${tailFile(logFile, 30)}`);
  });
  return {
    url,
    pid,
    callerToken,
    logFile,
    async stop() {
      await stopProcess(pid, { signal: 'SIGTERM', timeoutMs: 10_000, group: true });
      fs.rmSync(pidFile, { force: true });
    },
  };
}

/**
 * One export of the Contact's Events through the internal route, read to its end.
 * @param {EventsProcess} events
 * @param {string} tenantId
 * @param {string} contactId
 * @returns {Promise<{ ms: number, lines: number, status: number }>}
 */
async function exportOnce(events, tenantId, contactId) {
  const t0 = performance.now();
  const res = await fetch(
    `${events.url}/internal/v1/tenants/${tenantId}/contacts/${contactId}/export`,
    { headers: { authorization: `Bearer ${events.callerToken}` } },
  );
  const text = await res.text();
  const ms = performance.now() - t0;
  let lines = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines += 1;
  return { ms, lines, status: res.status };
}

/**
 * `count` exports one after the other, after `warmup` not counted: each one's time to the last
 * byte. `unexpected` counts the answers that were not 200 with `expected` lines.
 * @param {EventsProcess} events
 * @param {{ tenantId: string, contactId: string, count: number, warmup: number,
 *   expected: number }} target
 */
export async function timeExports(events, { tenantId, contactId, count, warmup, expected }) {
  /** @type {number[]} */
  const latencies = [];
  let unexpected = 0;
  for (let i = 0; i < warmup + count; i += 1) {
    const r = await exportOnce(events, tenantId, contactId);
    if (i < warmup) continue;
    latencies.push(r.ms);
    if (r.status !== 200 || r.lines !== expected) unexpected += 1;
  }
  return { latencies, unexpected, ...stats(latencies) };
}
