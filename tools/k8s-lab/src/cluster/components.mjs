// The cluster's processes as its commands see them: where each keeps its pid and log, how each
// tells it is ready, which ports it holds; and kubectl against the cluster.
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { repoRoot } from '@herald/stack/config.mjs';
import { tailFile } from '@herald/stack/files.mjs';
import { httpRequest } from '@herald/stack/net.mjs';
import { StackError } from '@herald/stack/output.mjs';
import { livePid, run } from '@herald/stack/processes.mjs';
import { CRI_RESET, KUBE_BINARIES } from './build.mjs';
import {
  DNS_SERVICE_IP,
  NODE_NAME,
  apiServerUrl,
  clusterPaths,
  pickNodeIp,
  ports,
  toolsDirs,
} from './config.mjs';
import { resolveA } from './dns.mjs';
import { asList } from './manifests.mjs';

export const paths = clusterPaths();
/** @param {string} p */
export const rel = (p) => path.relative(repoRoot, p);
/** @param {number} since */
export const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

/**
 * Each program's path: containerd and etcd as found on the machine, the rest as built here.
 * @param {{ containerd?: string, etcd?: string }} [found]
 * @returns {Record<string, string>}
 */
export function bins(found = {}) {
  const kube = toolsDirs().kube;
  const own = Object.fromEntries([...KUBE_BINARIES, CRI_RESET].map((b) => [b, path.join(kube, b)]));
  return {
    containerd: found.containerd ?? 'containerd',
    etcd: found.etcd ?? 'etcd',
    ...own,
  };
}

export const kubectlPath = () => path.join(toolsDirs().kube, 'kubectl');

/**
 * kubectl as the cluster's admin.
 * @param {string[]} args
 * @param {{ check?: boolean, timeoutMs?: number }} [opts] as `run` of @herald/stack/processes.mjs
 */
export async function kubectl(args, opts = {}) {
  return run(kubectlPath(), ['--kubeconfig', paths.kubeconfig, ...args], {
    timeoutMs: 5 * 60000,
    ...opts,
  });
}

/** The node's address: the first IPv4 address of the interface with the default route. */
export async function nodeIp() {
  const { stdout } = await run('ip', ['-4', 'route', 'show', 'default'], { check: false });
  const ip = pickNodeIp(undefined, stdout);
  if (!ip) throw new StackError('cluster', 'no non-loopback IPv4 address for the node');
  return ip;
}

/** @param {string} name */
export const pidFile = (name) => path.join(paths.run, `${name}.pid`);
/** @param {string} name */
export const logFile = (name) => path.join(paths.logs, `${name}.log`);
/** @param {string} name */
export const running = (name) => livePid(pidFile(name), name === 'etcd' ? 'etcd' : name);

/**
 * @param {string} url
 * @param {{ ca?: string, insecure?: boolean, token?: string }} [options]
 * @returns {Promise<{ status: number | undefined, body: string }>}
 */
function httpsGet(url, { ca, insecure = false, token } = {}) {
  return new Promise((resolve, reject) => {
    const req = https.get(
      url,
      {
        ca,
        rejectUnauthorized: !insecure,
        headers: token ? { authorization: `Bearer ${token}` } : {},
        timeout: 2000,
        agent: false,
      },
      (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/**
 * How each component tells it is ready (and where `status` looks).
 * @param {string | null} ip
 * @param {string | undefined} caPem
 * @returns {Record<string, () => Promise<boolean>>}
 */
export function readiness(ip, caPem) {
  /** @param {Promise<{ status: number | undefined }>} p */
  const ok = (p) => p.then((r) => r.status === 200).catch(() => false);
  return {
    containerd: async () => {
      if (!fs.existsSync(paths.containerdSocket)) return false;
      const r = await run('ctr', ['--address', paths.containerdSocket, 'version'], {
        check: false,
      });
      return r.code === 0;
    },
    etcd: () => ok(httpRequest(`http://127.0.0.1:${ports.etcdClient}/health`)),
    'kube-apiserver': () => ok(httpsGet(`${apiServerUrl(ip)}/readyz`, { ca: caPem })),
    'kube-controller-manager': () =>
      ok(httpsGet(`https://127.0.0.1:${ports.controllerManager}/healthz`, { insecure: true })),
    'kube-scheduler': () =>
      ok(httpsGet(`https://127.0.0.1:${ports.scheduler}/healthz`, { insecure: true })),
    // /healthz also wants the node to be eligible for load balancer traffic; /livez is the sync
    'kube-proxy': () => ok(httpRequest(`http://127.0.0.1:${ports.kubeProxyHealthz}/livez`)),
    kubelet: () => ok(httpRequest(`http://127.0.0.1:${ports.kubeletHealthz}/healthz`)),
  };
}

/**
 * The ports each component listens on, and on which address.
 * @param {string | null} ip
 * @returns {Record<string, [string | null, number][]>}
 */
export function listening(ip) {
  return {
    containerd: [],
    etcd: [
      ['127.0.0.1', ports.etcdClient],
      ['127.0.0.1', ports.etcdPeer],
    ],
    'kube-apiserver': [[ip, ports.apiserver]],
    'kube-controller-manager': [['127.0.0.1', ports.controllerManager]],
    'kube-scheduler': [['127.0.0.1', ports.scheduler]],
    'kube-proxy': [
      ['127.0.0.1', ports.kubeProxyHealthz],
      ['127.0.0.1', ports.kubeProxyMetrics],
    ],
    kubelet: [
      [ip, ports.kubelet],
      ['127.0.0.1', ports.kubeletHealthz],
    ],
  };
}

/**
 * `kubectl apply` of `objects`, written as config/<name>.json.
 * @param {string} name
 * @param {object[]} objects
 */
export async function applyObjects(name, objects) {
  const file = path.join(paths.config, `${name}.json`);
  fs.writeFileSync(file, asList(objects));
  await kubectl(['apply', '-f', file]);
}

/**
 * The node's Ready condition is True, and (with `since`) the kubelet reported it at or after that
 * time: a Node object kept in etcd from an earlier run still says Ready before its kubelet is back.
 * @param {number} [since] ms since the epoch
 */
export async function nodeReady(since) {
  const { stdout } = await kubectl(['get', 'node', NODE_NAME, '-o', 'json'], { check: false });
  if (!stdout) return false;
  const ready = JSON.parse(stdout).status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status !== 'True') return false;
  // heartbeat times have whole seconds
  return (
    since === undefined || Date.parse(ready.lastHeartbeatTime) >= Math.floor(since / 1000) * 1000
  );
}

/**
 * CoreDNS's answer for `name` when it holds `expected`, else null.
 * @param {string} name
 * @param {string} expected an IPv4 address
 */
export async function dnsAnswers(name, expected) {
  const answer = await resolveA(DNS_SERVICE_IP, name, { timeoutMs: 1000 });
  return answer.addresses.includes(expected) ? answer : null;
}

/**
 * The last lines of a component's log.
 * @param {string} name
 */
export function logTail(name, lines = 40) {
  return tailFile(logFile(name), lines);
}
