// One pod of the chart, run once with runc from a built image: a service until it is ready, then
// SIGTERM as Kubernetes sends it; a migration Job until it exits.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { httpRequest } from '@herald/stack/net.mjs';
import { sleep } from '@herald/stack/processes.mjs';
import { tailFile } from '@herald/stack/files.mjs';
import { tool } from './tools.mjs';
import {
  hardLimits,
  quantityBytes,
  removeContainer,
  runcConfig,
  securityOf,
  signalContainer,
  startContainer,
  writeBundle,
} from './runc.mjs';

/**
 * A TCP port nobody listens on right now, on loopback.
 * @returns {Promise<number>}
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => {
      const { port } = /** @type {net.AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

/** The root file system of an image, mounted from local storage; `release()` unmounts it. */
export async function mountImage(tag) {
  const { stdout: created } = await tool('buildah', ['from', '--pull=never', '--quiet', tag]);
  const container = created.trim().split('\n').at(-1);
  const { stdout: mounted } = await tool('buildah', ['mount', container]);
  return {
    rootfs: mounted.trim(),
    release: async () => {
      await tool('buildah', ['umount', container], { check: false });
      await tool('buildah', ['rm', container], { check: false });
    },
  };
}

/**
 * The status a GET of `url` answers, or 0 when it does not answer.
 * @param {string} url
 */
async function answers(url) {
  try {
    const res = await httpRequest(url, { timeoutMs: 2000 });
    return res.status;
  } catch {
    return 0;
  }
}

/** @typedef {ReturnType<typeof import('./chart.mjs').podsOf>[number]} Pod */
/** @typedef {Awaited<ReturnType<typeof startContainer>['exited']>} Exit */
/**
 * A container running: `exit` is null until `exited` resolves.
 * @typedef {{ id: string, exited: Promise<Exit>, exit: Exit | null }} Container
 */
/**
 * What one pod's run showed; `problem` says why it is not `ok`.
 * @typedef {object} PodResult
 * @property {string} name
 * @property {string} kind
 * @property {boolean} ok
 * @property {string} logFile
 * @property {string} [problem]
 * @property {number} [seconds] a migration's run time
 * @property {number} [readySeconds]
 * @property {number} [healthz] the status of the liveness probe's path
 * @property {number} [metrics] the status of /metrics
 * @property {number} [stopSeconds]
 * @property {number | string} [exitCode] the code or signal it stopped with after SIGTERM
 * @property {string} [logTail]
 */

/**
 * Runs one pod. `pod` from podsOf; `env` its local environment; `image` {rootfs, config} (the
 * image's OCI config: Env, WorkingDir, User). Returns a result row; never throws for the pod's
 * own failure (the row says what failed), so the others still run.
 * @param {object} options
 * @param {string} options.runc
 * @param {Pod} options.pod
 * @param {Record<string, string>} options.env
 * @param {{ rootfs: string, config: ImageConfig }} options.image
 * @param {string} options.workDir
 * @param {string} options.logDir
 * @returns {Promise<PodResult>}
 */
export async function runPod({ runc, pod, env, image, workDir, logDir }) {
  const id = `herald-images-${pod.name}`;
  const logFile = path.join(logDir, `${pod.name}.log`);
  fs.mkdirSync(logDir, { recursive: true });
  fs.writeFileSync(logFile, '');
  const bundle = writeBundle(path.join(workDir, id), podConfig(pod, env, image, id));
  await removeContainer(runc, id);
  /** @type {PodResult} */
  const row = { name: pod.name, kind: pod.kind, ok: false, logFile };
  const { exited } = startContainer({ runc, id, bundle, logFile });
  /** @type {Container} */
  const container = { id, exited, exit: null };
  exited.then((e) => (container.exit = e));
  try {
    if (pod.kind === 'migration') return await awaitMigration(pod, container, row);
    return await serviceLifecycle({ runc, pod, env, container, row });
  } finally {
    if (!container.exit) {
      await signalContainer(runc, id, 'KILL');
      await Promise.race([exited, sleep(10000)]);
    }
    await removeContainer(runc, id);
    if (!row.ok) row.logTail = tailFile(logFile, 15);
  }
}

/**
 * The parts of an image's OCI config a run reads.
 * @typedef {{ Env?: string[], Entrypoint?: string[], Cmd?: string[], WorkingDir?: string,
 *   User?: string }} ImageConfig
 */

/**
 * The runc config of the pod's container, as the chart runs it.
 * @param {Pod} pod
 * @param {Record<string, string>} env
 * @param {{ rootfs: string, config: ImageConfig }} image
 * @param {string} id
 */
function podConfig(pod, env, image, id) {
  const imageEnv = Object.fromEntries(
    (image.config.Env ?? []).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]),
  );
  return runcConfig({
    rootfs: image.rootfs,
    // the chart's command replaces the image's entrypoint and command
    args: [
      ...(pod.command ?? image.config.Entrypoint ?? []),
      ...(pod.args ?? (pod.command ? [] : (image.config.Cmd ?? []))),
    ],
    // the image's variables, then the pod's (which win), as Kubernetes does
    env: { ...imageEnv, HOSTNAME: pod.resource, ...env },
    cwd: image.config.WorkingDir,
    hostname: pod.resource,
    security: securityOf(pod.podSecurityContext, pod.securityContext, image.config.User),
    tmpBytes: quantityBytes(pod.tmpSize ?? '64Mi'),
    memoryBytes: pod.memoryLimit ? quantityBytes(pod.memoryLimit) : undefined,
    cgroupsPath: `/herald-images/${id}`,
    hostNetwork: true,
    limits: hardLimits(fs.readFileSync('/proc/self/limits', 'utf8')),
    etcFiles: { '/etc/hosts': '/etc/hosts', '/etc/resolv.conf': '/etc/resolv.conf' },
  });
}

/**
 * A migration Job: it must exit 0 within its activeDeadlineSeconds.
 * @param {Pod} pod
 * @param {Container} container
 * @param {PodResult} row
 */
async function awaitMigration(pod, container, row) {
  const deadline = (pod.activeDeadlineSeconds ?? 900) * 1000;
  const timer = sleep(deadline).then(() => null);
  const result = await Promise.race([container.exited, timer]);
  if (!result) {
    row.problem = `still running after activeDeadlineSeconds (${deadline / 1000} s)`;
    return row;
  }
  row.seconds = result.seconds;
  row.ok = result.code === 0;
  if (!row.ok) row.problem = `exited with ${result.signal ?? result.code}`;
  return row;
}

/**
 * A service: ready within its startup probe's allowance, its liveness path and /metrics
 * answering 200, then stopped by SIGTERM within its grace period, with exit code 0.
 * @param {object} options
 * @param {string} options.runc
 * @param {Pod} options.pod
 * @param {Record<string, string>} options.env
 * @param {Container} options.container
 * @param {PodResult} options.row
 */
async function serviceLifecycle({ runc, pod, env, container, row }) {
  // ready: what the startup and readiness probes ask, within the startup probe's allowance
  const startup = pod.probes.startupProbe;
  const budgetMs = startup ? startup.periodSeconds * startup.failureThreshold * 1000 : 60000;
  const t0 = Date.now();
  const readyUrl = `http://127.0.0.1:${env.PORT}${pod.probes.readinessProbe?.path ?? '/readyz'}`;
  while (Date.now() - t0 < budgetMs && !container.exit) {
    if ((await answers(readyUrl)) === 200) break;
    await sleep(250);
  }
  const exit = container.exit;
  if (exit) {
    row.problem = `exited before it was ready (${exit.signal ?? `code ${exit.code}`})`;
    return row;
  }
  if ((await answers(readyUrl)) !== 200) {
    row.problem = `${readyUrl} did not answer 200 within ${budgetMs / 1000} s`;
    return row;
  }
  row.readySeconds = (Date.now() - t0) / 1000;
  const healthUrl = `http://127.0.0.1:${env.PORT}${pod.probes.livenessProbe?.path ?? '/healthz'}`;
  row.healthz = await answers(healthUrl);
  if (env.METRICS_PORT) row.metrics = await answers(`http://127.0.0.1:${env.METRICS_PORT}/metrics`);
  // SIGTERM after the preStop sleep (which is not run here: nothing routes to this pod); the
  // process then has what is left of the grace period
  const graceMs = (pod.terminationGracePeriodSeconds - pod.preStopSleepSeconds) * 1000;
  const t1 = Date.now();
  await signalContainer(runc, container.id, 'TERM');
  const stopped = await Promise.race([container.exited, sleep(graceMs).then(() => null)]);
  if (!stopped) {
    await signalContainer(runc, container.id, 'KILL');
    row.problem = `did not stop within ${graceMs / 1000} s of SIGTERM (killed)`;
    return row;
  }
  row.stopSeconds = (Date.now() - t1) / 1000;
  row.exitCode = stopped.signal ?? stopped.code;
  const checks = [
    row.healthz === 200 ? null : `${healthUrl} answered ${row.healthz}`,
    !env.METRICS_PORT || row.metrics === 200 ? null : `/metrics answered ${row.metrics}`,
    stopped.code === 0 ? null : `exited with ${row.exitCode} after SIGTERM`,
  ].filter(Boolean);
  row.ok = checks.length === 0;
  if (!row.ok) row.problem = checks.join('; ');
  return row;
}
