// `up`: builds the binaries once, writes the configuration, starts every component that is not
// running (restarting one whose configuration changed), imports the image archives, and waits
// until the node is Ready and CoreDNS answers. Idempotent.
import fs from 'node:fs';
import path from 'node:path';
import { ensureDir, readText, writeIfChanged } from '@herald/stack/files.mjs';
import { portFree } from '@herald/stack/net.mjs';
import { registryHost } from '@herald/stack/registry.mjs';
import { StackError, say } from '@herald/stack/output.mjs';
import { isRoot, startDetached, stopProcess, waitFor } from '@herald/stack/processes.mjs';
import { ensureBinaries } from './build.mjs';
import {
  applyObjects,
  bins,
  dnsAnswers,
  kubectl,
  kubectlPath,
  listening,
  logFile,
  nodeIp,
  nodeReady,
  paths,
  pidFile,
  readiness,
  rel,
  running,
  seconds,
} from './components.mjs';
import {
  API_SERVICE_IP,
  CLUSTER_DOMAIN,
  COMPONENTS,
  DNS_SERVICE_IP,
  NODE_NAME,
  apiServerUrl,
  cniConflist,
  containerdConfig,
  registryHostsToml,
  kubeProxyConfig,
  kubeconfig,
  kubeletConfig,
} from './config.mjs';
import { ensureHostPackages, installGuard, prepareKernel } from './host.mjs';
import {
  clusterImages,
  ensureClusterImageArchives,
  importArchive,
  listImages,
  normalizedRef,
} from './images.mjs';
import { corednsObjects } from './manifests.mjs';
import { ensurePki } from './pki.mjs';
import { processArgs } from './process-args.mjs';

export async function up() {
  if (!isRoot) throw new StackError('cluster', 'runs as root (containerd, kubelet, iptables)');
  const started = Date.now();
  for (const dir of [paths.base, paths.logs, paths.run]) ensureDir(dir);
  const found = await ensureHostPackages();
  const build = await ensureBinaries({ logFile: logFile('build') });
  if (build.built) say(`cluster: binaries built in ${build.seconds.toFixed(0)} s`);
  const ip = await nodeIp();
  const { tokens, caPem } = await ensurePki(paths.pki, ip);
  const changed = writeConfigs({ ip, tokens, caPem });
  await prepareKernel(paths.state);
  // before anything can send a packet to a pod or Service address
  await installGuard();
  const specs = processArgs({ paths, nodeIp: ip, bins: bins(found) });
  const ready = readiness(ip, caPem);
  let kubeletStartedAt;
  for (const name of COMPONENTS) {
    const spec = { ...specs[name], ip };
    const pid = running(name);
    if (pid && changed.has(name)) {
      say(`cluster: ${name}'s configuration changed; restarting it`);
      await stopProcess(pid, { timeoutMs: 20000 });
    } else if (pid) {
      await waitFor(ready[name], { timeoutMs: 60000, what: `${name} to answer` });
      say(`cluster: ${name} already running (pid ${pid})`);
      if (name === 'containerd') await importImages();
      continue;
    }
    if (name === 'kubelet') kubeletStartedAt = Date.now();
    await startComponent(name, spec, ready[name]);
    if (name === 'containerd') await importImages();
  }

  const readyStarted = Date.now();
  await waitFor(() => nodeReady(kubeletStartedAt), {
    timeoutMs: 180000,
    intervalMs: 1000,
    what: `node ${NODE_NAME} to be Ready`,
  });
  say(`cluster: node ${NODE_NAME} Ready (${seconds(readyStarted)})`);
  await applyObjects('coredns', corednsObjects());
  const dnsStarted = Date.now();
  const kubernetesName = `kubernetes.default.svc.${CLUSTER_DOMAIN}`;
  await waitFor(() => dnsAnswers(kubernetesName, API_SERVICE_IP), {
    timeoutMs: 180000,
    intervalMs: 1000,
    what: `CoreDNS at ${DNS_SERVICE_IP} to answer ${kubernetesName}`,
  }).catch(async (err) => {
    const { stdout } = await kubectl(['-n', 'kube-system', 'get', 'pods', '-o', 'wide'], {
      check: false,
    });
    throw new StackError('coredns', `${err.message}\n${stdout}`, { logFile: logFile('kubelet') });
  });
  say(`cluster: CoreDNS answers ${kubernetesName} = ${API_SERVICE_IP} (${seconds(dnsStarted)})`);
  say(`cluster: up in ${seconds(started)}; use it with

  KUBECONFIG=${rel(paths.kubeconfig)} ${rel(kubectlPath())} get nodes
`);
}

/**
 * Writes every configuration file; returns the components whose files changed.
 * @param {{ ip: string, tokens: Record<string, string>, caPem: string }} inputs
 */
function writeConfigs({ ip, tokens, caPem }) {
  ensureDir(paths.config);
  const server = apiServerUrl(ip);
  const changed = new Set();
  /**
   * @param {string} file
   * @param {string} content
   * @param {string[]} components
   * @param {number} [mode]
   */
  const write = (file, content, components, mode) => {
    if (writeIfChanged(path.join(paths.config, file), content, mode)) {
      for (const c of components) changed.add(c);
    }
  };
  /**
   * @param {string} user
   * @param {string} token
   */
  const kc = (user, token) => kubeconfig({ server, caPem, user, token });
  write('containerd.toml', containerdConfig(paths), ['containerd']);
  // containerd reads hosts.toml at each pull: a change needs no restart.
  ensureDir(path.join(paths.registryHosts, registryHost));
  writeIfChanged(
    path.join(paths.registryHosts, registryHost, 'hosts.toml'),
    registryHostsToml(registryHost),
  );
  write('controller-manager.kubeconfig', kc('kube-controller-manager', tokens.controllerManager), [
    'kube-controller-manager',
  ]);
  write('scheduler.kubeconfig', kc('kube-scheduler', tokens.scheduler), ['kube-scheduler']);
  write('kubelet.kubeconfig', kc(NODE_NAME, tokens.node), ['kubelet'], 0o600);
  write('kube-proxy.kubeconfig', kc('kube-proxy', tokens.kubeProxy), ['kube-proxy'], 0o600);
  write('kubelet.json', kubeletConfig({ paths, nodeIp: ip }), ['kubelet']);
  write('kube-proxy.json', kubeProxyConfig({ paths, nodeIp: ip }), ['kube-proxy']);
  ensureDir(paths.cniConfDir);
  writeIfChanged(path.join(paths.cniConfDir, '10-herald-cluster.conflist'), cniConflist(paths));
  writeIfChanged(paths.kubeconfig, kc('herald-admin', tokens.admin), 0o600);
  return changed;
}

/**
 * Starts one component once its ports are free, and waits until it is ready.
 * @param {string} name
 * @param {{ cmd: string, args: string[], ip: string }} spec
 * @param {() => Promise<boolean>} ready
 */
async function startComponent(name, spec, ready) {
  for (const [host, port] of listening(spec.ip)[name]) {
    if (!(await portFree(port, host))) {
      throw new StackError(name, `port ${port} on ${host} is already in use by another process`);
    }
  }
  const started = Date.now();
  await startDetached({
    component: name,
    label: name,
    cmd: spec.cmd,
    args: spec.args,
    env: { ...process.env, PATH: `${process.env.PATH}:/usr/sbin:/sbin` },
    logFile: logFile(name),
    pidFile: pidFile(name),
    banner: `${name} ${spec.args.join(' ')}`,
    ready,
    timeoutMs: 120000,
    intervalMs: 300,
    timeoutMessage: `not ready after 120 s`,
  });
  say(`cluster: ${name} up (${seconds(started)})`);
}

const importedRecord = () => path.join(paths.run, 'imported-archives.json');

/**
 * Imports each image archive (the cluster's own, then the project's) that is new or changed since
 * it was last imported, or whose images containerd no longer has.
 */
async function importImages() {
  const built = await ensureClusterImageArchives();
  for (const name of built) say(`cluster: built image ${name}`);
  const record = JSON.parse(readText(importedRecord()) ?? '{}');
  const present = new Set(await listImages(paths.containerdSocket));
  // Only the cluster's own images: Herald's are pulled from the registry a release was pushed to.
  const archives = clusterImages().map((image) => ({ file: image.archive, names: [image.name] }));
  for (const { file, names } of archives) {
    const stat = fs.statSync(file);
    const key = `${stat.size}:${stat.mtimeMs}`;
    const known = record[file];
    if (known?.key === key && known.names.every((n) => present.has(normalizedRef(n)))) continue;
    const imported = await importArchive(paths.containerdSocket, file, names);
    record[file] = { key, names: imported };
    say(`cluster: imported ${rel(file)} as ${imported.join(', ') || '(unnamed)'}`);
  }
  fs.writeFileSync(importedRecord(), `${JSON.stringify(record, null, 2)}\n`);
}
