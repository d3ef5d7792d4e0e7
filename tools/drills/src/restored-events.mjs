// The events service (or its relay) run once more, on a drill's own database: the process the
// stack runs (its entry, node arguments and environment), on free loopback ports. The restore
// drill reads the restored Events through the same internal export route the contacts service
// calls.
import fs from 'node:fs';
import path from 'node:path';
import { contactDataRoutes, internalClient } from '@herald/internal-api';
import { findService, host } from '@herald/stack/config.mjs';
import { tailFile } from '@herald/stack/files.mjs';
import { freePort, httpRequest } from '@herald/stack/net.mjs';
import { readPid, startDetached, stopProcess } from '@herald/stack/processes.mjs';
import { serviceToken } from '@herald/stack/secrets.mjs';
import { serviceEnv } from '@herald/stack/service-runner.mjs';

/**
 * @typedef {object} ExportedEvent
 * @property {string | null} dedupKey
 * @property {string} eventName
 */

/**
 * The nearest folder above `file` holding a package.json: the service's working directory, from
 * which its node arguments (`--import @herald/telemetry/register`) resolve.
 * @param {string} file
 */
function packageDir(file) {
  let dir = path.dirname(file);
  while (!fs.existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return dir;
}

/**
 * Starts a process of the stack's registry (`name`: the events service, its relay) on
 * `databaseUrl`, with `env` over the stack's environment for it; resolves once its /readyz
 * answers 200. Its stop (SIGTERM to its process group) is in `undo` from before it starts: a
 * process that never became ready is still running, and its pid file names it.
 * @param {{ databaseUrl: string, logFile: string, pidFile: string, name?: string,
 *   env?: Record<string, string> }} options
 * @param {import('./undo.mjs').Undo} undo
 * @returns {Promise<string>} its URL
 */
export async function startServiceOn(
  { databaseUrl, logFile, pidFile, name = 'events', env: extraEnv = {} },
  undo,
) {
  const service = findService(name);
  if (!fs.existsSync(service.entryPath)) {
    throw new Error(`${service.entry} is not built: run \`npm run build\``);
  }
  const [port, metricsPort] = [await freePort(), await freePort()];
  const url = `http://${host}:${port}`;
  const env = {
    ...serviceEnv(name),
    PORT: String(port),
    METRICS_PORT: String(metricsPort),
    DATABASE_URL: databaseUrl,
    ...extraEnv,
  };
  const ready = async () => {
    try {
      return (await httpRequest(`${url}/readyz`, { timeoutMs: 1500 })).status === 200;
    } catch {
      return false;
    }
  };
  undo.push(async () => {
    const pid = readPid(pidFile);
    if (pid) await stopProcess(pid, { signal: 'SIGTERM', timeoutMs: 10_000, group: true });
  });
  const started = startDetached({
    component: 'restore drill',
    label: `${name} on ${databaseUrl}`,
    cmd: process.execPath,
    args: [...service.nodeArgs, service.entryPath],
    cwd: packageDir(service.entryPath),
    env,
    logFile,
    pidFile,
    banner: `${name} on ${databaseUrl}`,
    ready,
    timeoutMs: 60_000,
    timeoutMessage: `${url}/readyz did not answer 200 within 60 s`,
  });
  // The log goes with the scratch folder: what it says goes with the error.
  await started.catch((/** @type {Error} */ err) => {
    throw new Error(`${err.message}; its log ends:\n${tailFile(logFile, 30)}`);
  });
  return url;
}

/**
 * The Contact's Events as the export route streams them, called as the contacts service calls
 * it (with its service token).
 * @param {string} baseUrl
 * @param {string} tenantId
 * @param {string} contactId
 * @returns {Promise<ExportedEvent[]>}
 */
export async function exportContactEvents(baseUrl, tenantId, contactId) {
  const client = internalClient(contactDataRoutes, {
    baseUrl,
    serviceToken: serviceToken('contacts'),
    serviceName: 'the events service on the restored database',
    timeoutMs: 120_000,
  });
  const answer = await client.exportContactEvents.call({
    params: { tenantId, contactId },
    consequence: 'the restored Events cannot be read',
  });
  if (answer.status !== 200) {
    throw new Error(`the export answered ${answer.status}: ${answer.text.slice(0, 500)}`);
  }
  return answer.text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      /** @type {{ type: string, data: ExportedEvent }} */
      const parsed = JSON.parse(line);
      return { dedupKey: parsed.data.dedupKey, eventName: parsed.data.eventName };
    });
}
