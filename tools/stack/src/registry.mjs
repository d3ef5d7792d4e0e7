// A local OCI registry: the CNCF distribution registry (built from its Go module, go-tools.mjs)
// as a plain process on 127.0.0.1:25000 (HERALD_REGISTRY_PORT), its blobs under
// <data dir>/registry. `npm run release` pushes the images and the chart to it when no other
// registry is named, and the test cluster pulls from it. Plain HTTP on loopback only; `npm stop`
// stops it. Not part of `npm start`: nothing else needs it.
import fs from 'node:fs';
import path from 'node:path';
import { dataDir, host, logDir, portEnvVars, ports, runDir } from './config.mjs';
import { ensureDir } from './files.mjs';
import { ensureGoTool } from './go-tools.mjs';
import { assertPortFree, httpRequest } from './net.mjs';
import { say } from './output.mjs';
import { livePid, startDetached, stopProcess } from './processes.mjs';

const component = 'registry';
/** What the images and the chart are named with: `<registryHost>/herald/<process>:<version>`. */
export const registryHost = `${host}:${ports.registry}`;
const paths = {
  config: path.join(dataDir, 'registry', 'config.yml'),
  storage: path.join(dataDir, 'registry', 'data'),
  pidFile: path.join(runDir, 'registry.pid'),
  logFile: path.join(logDir, 'registry.log'),
};

/**
 * Whether a registry (`host[:port][/path]`) is on this machine's loopback, the one case in which
 * it is reached over plain HTTP; every other registry is TLS, verified.
 * @param {string} registry
 */
export function isLoopbackRegistry(registry) {
  return /^(127\.0\.0\.1|localhost)(:\d+)?$/.test(registry.split('/')[0]);
}

export function registryPid() {
  return livePid(paths.pidFile, 'registry');
}

/** True when the registry answers its API's base route. */
async function answers() {
  try {
    return (await httpRequest(`http://${registryHost}/v2/`, { timeoutMs: 1000 })).status === 200;
  } catch {
    return false;
  }
}

function config() {
  return [
    '# Written by tools/stack/src/registry.mjs on every start.',
    'version: 0.1',
    'log:',
    '  level: info',
    '  formatter: json',
    '  accesslog:',
    '    disabled: true',
    'storage:',
    '  filesystem:',
    `    rootdirectory: ${paths.storage}`,
    '  delete:',
    '    enabled: true',
    'http:',
    `  addr: ${registryHost}`,
    '',
  ].join('\n');
}

/** Starts the registry unless it runs; resolves once it answers. Returns its host:port. */
export async function ensureRegistry() {
  const pid = registryPid();
  if (pid && (await answers())) return registryHost;
  // Ours but not answering (stuck, or still starting long after it should): start it afresh.
  if (pid) await stopProcess(pid);
  ensureDir(runDir);
  ensureDir(logDir);
  ensureDir(paths.storage);
  fs.writeFileSync(paths.config, config());
  await assertPortFree(component, ports.registry, portEnvVars.registry);
  const binary = ensureGoTool('registry');
  say(`registry: starting on http://${registryHost}`);
  await startDetached({
    component,
    label: 'the OCI registry',
    cmd: binary,
    args: ['serve', paths.config],
    // Its tracing would look for a collector that is not there.
    env: { ...process.env, OTEL_TRACES_EXPORTER: 'none' },
    logFile: paths.logFile,
    pidFile: paths.pidFile,
    banner: 'starting the OCI registry',
    ready: answers,
    timeoutMs: 15000,
    timeoutMessage: `the registry did not answer http://${registryHost}/v2/ within 15 s`,
  });
  return registryHost;
}

export async function stopRegistry() {
  const pid = registryPid();
  return pid ? stopProcess(pid) : 'not running';
}
