// The single-node cluster as plain processes: `up` (idempotent), `down` (idempotent, leaves
// nothing running or mounted), `status` and `check`. See docs/cluster.md.
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { ensureDir, readText, tailFile, writeIfChanged } from '@herald/stack/files.mjs';
import { httpRequest, portFree } from '@herald/stack/net.mjs';
import { StackError, say } from '@herald/stack/output.mjs';
import {
  cmdline,
  isRoot,
  livePid,
  run,
  sleep,
  startDetached,
  stopProcess,
  waitFor,
} from '@herald/stack/processes.mjs';
import { repoRoot } from '@herald/stack/config.mjs';
import { CRI_RESET, KUBE_BINARIES, ensureBinaries } from './build.mjs';
import {
  COMPONENTS,
  DNS_SERVICE_IP,
  API_SERVICE_IP,
  CLUSTER_DOMAIN,
  NODE_NAME,
  apiServerUrl,
  clusterPaths,
  cniConflist,
  containerdConfig,
  kubeProxyConfig,
  kubeconfig,
  kubeletConfig,
  pickNodeIp,
  ports,
  processArgs,
  toolsDirs,
} from './config.mjs';
import { resolveA } from './dns.mjs';
import {
  cleanIptables,
  ensureHostPackages,
  installGuard,
  podProcesses,
  prepareKernel,
  removeBridge,
  removeCniCache,
  removePodCgroups,
  removeRunFolders,
  restoreKernel,
  unmountBelow,
} from './host.mjs';
import {
  clusterImages,
  ensureClusterImageArchives,
  importArchive,
  listImages,
  normalizedRef,
  projectArchives,
} from './images.mjs';
import {
  CHECK_APP,
  CHECK_NAMESPACE,
  asList,
  checkObjects,
  corednsObjects,
  lookupPod,
} from './manifests.mjs';
import { ensurePki } from './pki.mjs';

export { StackError };

const paths = clusterPaths();
const rel = (p) => path.relative(repoRoot, p);
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

function bins(found = {}) {
  const kube = toolsDirs().kube;
  const own = Object.fromEntries([...KUBE_BINARIES, CRI_RESET].map((b) => [b, path.join(kube, b)]));
  return {
    containerd: found.containerd ?? 'containerd',
    etcd: found.etcd ?? 'etcd',
    ...own,
  };
}

export const kubectlPath = () => path.join(toolsDirs().kube, 'kubectl');

export async function kubectl(args, opts = {}) {
  return run(kubectlPath(), ['--kubeconfig', paths.kubeconfig, ...args], {
    timeoutMs: 5 * 60000,
    ...opts,
  });
}

async function nodeIp() {
  const { stdout } = await run('ip', ['-4', 'route', 'show', 'default'], { check: false });
  const ip = pickNodeIp(undefined, stdout);
  if (!ip) throw new StackError('cluster', 'no non-loopback IPv4 address for the node');
  return ip;
}

const pidFile = (name) => path.join(paths.run, `${name}.pid`);
const logFile = (name) => path.join(paths.logs, `${name}.log`);
const running = (name) => livePid(pidFile(name), name === 'etcd' ? 'etcd' : name);

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

/** How each component tells it is ready (and where `status` looks). */
function readiness(ip, caPem) {
  const ok = (p) => p.then((r) => r.status === 200).catch(() => false);
  return {
    containerd: () =>
      fs.existsSync(paths.containerdSocket) &&
      run('ctr', ['--address', paths.containerdSocket, 'version'], { check: false }).then(
        (r) => r.code === 0,
      ),
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

/** The ports each component listens on, and on which address. */
function listening(ip) {
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

/** Writes every configuration file; returns the components whose files changed. */
function writeConfigs({ ip, tokens, caPem }) {
  ensureDir(paths.config);
  const server = apiServerUrl(ip);
  const changed = new Set();
  const write = (file, content, components, mode) => {
    if (writeIfChanged(path.join(paths.config, file), content, mode)) {
      for (const c of components) changed.add(c);
    }
  };
  const kc = (user, token) => kubeconfig({ server, caPem, user, token });
  write('containerd.toml', containerdConfig(paths), ['containerd']);
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

async function applyObjects(name, objects) {
  const file = path.join(paths.config, `${name}.json`);
  fs.writeFileSync(file, asList(objects));
  await kubectl(['apply', '-f', file]);
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
  const archives = [
    ...clusterImages().map((image) => ({ file: image.archive, names: [image.name] })),
    ...projectArchives().map((file) => ({ file, project: true })),
  ];
  if (!archives.some((a) => a.project)) {
    say('cluster: no project image archives in .herald/images/ (npm run images makes them)');
  }
  for (const { file, names, project } of archives) {
    const stat = fs.statSync(file);
    const key = `${stat.size}:${stat.mtimeMs}`;
    const known = record[file];
    if (known?.key === key && known.names.every((n) => present.has(normalizedRef(n)))) {
      if (project) say(`cluster: ${rel(file)} already imported (${known.names.join(', ')})`);
      continue;
    }
    const imported = await importArchive(paths.containerdSocket, file, names);
    record[file] = { key, names: imported };
    say(`cluster: imported ${rel(file)} as ${imported.join(', ') || '(unnamed)'}`);
  }
  fs.writeFileSync(importedRecord(), `${JSON.stringify(record, null, 2)}\n`);
}

/**
 * The node's Ready condition is True, and (with `since`) the kubelet reported it at or after that
 * time: a Node object kept in etcd from an earlier run still says Ready before its kubelet is back.
 */
async function nodeReady(since) {
  const { stdout } = await kubectl(['get', 'node', NODE_NAME, '-o', 'json'], { check: false });
  if (!stdout) return false;
  const ready = JSON.parse(stdout).status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status !== 'True') return false;
  // heartbeat times have whole seconds
  return (
    since === undefined || Date.parse(ready.lastHeartbeatTime) >= Math.floor(since / 1000) * 1000
  );
}

async function dnsAnswers(name, expected) {
  const answer = await resolveA(DNS_SERVICE_IP, name, { timeoutMs: 1000 });
  return answer.addresses.includes(expected) ? answer : null;
}

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

/** containerd-shim processes serving our containerd (its socket is in their command line). */
function ourShims() {
  const pids = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cl = cmdline(Number(entry));
    if (cl?.includes('containerd-shim') && cl.includes(paths.containerdSocket)) {
      pids.push(Number(entry));
    }
  }
  return pids;
}

export async function down() {
  if (!isRoot) throw new StackError('cluster', 'runs as root (containerd, kubelet, iptables)');
  const stop = async (name) => {
    const pid = running(name);
    if (!pid) return;
    const how = await stopProcess(pid, { timeoutMs: 30000 });
    fs.rmSync(pidFile(name), { force: true });
    say(`cluster: ${name} ${how}`);
  };
  // the kubelet first, so that nothing restarts the pods removed next
  await stop('kubelet');
  const criReset = bins()[CRI_RESET];
  if (running('containerd') && fs.existsSync(criReset)) {
    const result = await run(criReset, [`unix://${paths.containerdSocket}`], {
      check: false,
      timeoutMs: 240000,
    });
    for (const line of `${result.stdout}${result.stderr}`.trim().split('\n').filter(Boolean)) {
      say(`cluster: ${line}`);
    }
  }
  for (const name of [...COMPONENTS].reverse()) await stop(name);
  if (fs.existsSync(bins()['kube-proxy'])) {
    await run(bins()['kube-proxy'], ['--cleanup'], { check: false, timeoutMs: 60000 });
  }
  for (const pid of ourShims()) {
    await stopProcess(pid, { timeoutMs: 5000 });
    say(`cluster: stopped leftover containerd shim ${pid}`);
  }
  const leftovers = podProcesses();
  const cgroups = removePodCgroups();
  if (leftovers.length > 0) say(`cluster: killed ${leftovers.length} leftover pod processes`);
  if (cgroups > 0) say(`cluster: removed ${cgroups} pod cgroups`);
  await sleep(200);
  const unmounted = fs.existsSync(paths.base) ? await unmountBelow(paths.base) : [];
  if (unmounted.length > 0)
    say(`cluster: unmounted ${unmounted.length} mounts below ${rel(paths.base)}`);
  if (await removeBridge()) say('cluster: removed the bridge link');
  const chains = await cleanIptables();
  if (chains.length > 0) say(`cluster: removed iptables chains ${chains.join(' ')}`);
  const otherContainerd = fs
    .readdirSync('/proc')
    .some((e) => /^\d+$/.test(e) && /(^|\/)containerd( |$)/.test(cmdline(Number(e)) ?? ''));
  const runFolders = removeRunFolders(otherContainerd);
  if (runFolders.length > 0) say(`cluster: removed empty ${runFolders.join(' ')}`);
  const cached = removeCniCache();
  if (cached > 0) say(`cluster: removed ${cached} CNI result cache entries`);
  // leases of pods that no longer exist; a lease left here would keep its address taken
  fs.rmSync(paths.cniIpam, { recursive: true, force: true });
  const restored = restoreKernel(paths.state);
  if (restored.length > 0) say(`cluster: restored ${restored.join(' ')}`);
  say('cluster: down');
}

export async function status() {
  let ip = null;
  try {
    ip = await nodeIp();
  } catch {
    // reported below
  }
  const caPem = readText(path.join(paths.pki, 'ca.crt')) ?? undefined;
  const ready = readiness(ip, caPem);
  const ports = listening(ip);
  const rows = [];
  let allUp = true;
  for (const name of COMPONENTS) {
    const pid = running(name);
    const answers = pid ? await ready[name]() : false;
    if (!answers) allUp = false;
    const where = ports[name].map(([h, p]) => `${h}:${p}`).join(' ') || rel(paths.containerdSocket);
    rows.push([
      name,
      pid ? String(pid) : '-',
      pid ? (answers ? 'up' : 'not answering') : 'stopped',
      where,
    ]);
  }
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i].length), 9));
  const line = (r) =>
    `${r[0].padEnd(widths[0])}  ${r[1].padEnd(widths[1])}  ${r[2].padEnd(widths[2])}  ${r[3]}`;
  process.stdout.write(`${line(['component', 'pid', 'state', 'listens'])}\n`);
  for (const r of rows) process.stdout.write(`${line(r)}\n`);
  if (running('kube-apiserver')) {
    const { stdout, stderr } = await kubectl(['get', 'nodes', '-o', 'wide'], { check: false });
    process.stdout.write(`\n${stdout || stderr}`);
    const pods = await kubectl(['get', 'pods', '-A', '-o', 'wide'], { check: false });
    process.stdout.write(`\n${pods.stdout || pods.stderr}`);
    if (!(await nodeReady())) allUp = false;
  } else {
    process.stdout.write(`\nnode ${NODE_NAME}: unknown (the apiserver is not running)\n`);
  }
  return allUp ? 0 : 3;
}

/** The same name looked up from inside a pod, when a project image with Node.js is there. */
async function lookupFromPod({ clusterIp, pass, fail }) {
  const image = (await listImages(paths.containerdSocket)).find((n) =>
    /^docker\.io\/herald\/[^/]+:/.test(n),
  );
  if (!image) {
    process.stdout.write(
      'ok - lookup from a pod # SKIP no project image imported (npm run images, then up)\n',
    );
    return;
  }
  await applyObjects('check-lookup', [lookupPod(image)]);
  const phase = await waitFor(
    async () => {
      const { stdout } = await kubectl(
        ['-n', CHECK_NAMESPACE, 'get', 'pod', 'lookup', '-o', 'jsonpath={.status.phase}'],
        { check: false },
      );
      return ['Succeeded', 'Failed'].includes(stdout) ? stdout : null;
    },
    { timeoutMs: 90000, intervalMs: 1000, what: 'the lookup pod to finish' },
  ).catch((err) => err.message);
  const { stdout: logs, stderr } = await kubectl(['-n', CHECK_NAMESPACE, 'logs', 'lookup'], {
    check: false,
  });
  const said = (logs || stderr).trim().split('\n').join('; ');
  if (phase === 'Succeeded' && logs.includes(`${CHECK_APP} -> ${clusterIp}`)) {
    pass(`from a pod (${image}, restricted): ${said}`);
  } else fail(`the lookup pod (${image}) ended ${phase}: ${said}`);
}

/** Applies the check workload and proves pods, Pod Security, Services and DNS work. */
export async function check() {
  const results = [];
  const pass = (what) => {
    results.push(true);
    process.stdout.write(`ok ${results.length} - ${what}\n`);
  };
  const fail = (what) => {
    results.push(false);
    process.stdout.write(`not ok ${results.length} - ${what}\n`);
  };
  if (!(await nodeReady())) {
    throw new StackError('check', `node ${NODE_NAME} is not Ready; run npm run cluster -- up`);
  }
  pass(`node ${NODE_NAME} is Ready`);
  // from nothing each time: pods of an earlier run would prove nothing about this one
  await kubectl(['delete', 'namespace', CHECK_NAMESPACE, '--ignore-not-found', '--wait=true']);
  const started = Date.now();
  await applyObjects('check', checkObjects());
  const rollout = await kubectl(
    ['-n', CHECK_NAMESPACE, 'rollout', 'status', `deployment/${CHECK_APP}`, '--timeout=180s'],
    { check: false },
  );
  const { stdout: podsJson } = await kubectl([
    '-n',
    CHECK_NAMESPACE,
    'get',
    'pods',
    '-l',
    `app=${CHECK_APP}`,
    '-o',
    'json',
  ]);
  const pods = JSON.parse(podsJson).items;
  const runningPods = pods.filter(
    (p) => p.status.phase === 'Running' && p.status.containerStatuses?.every((c) => c.ready),
  );
  const podLines = pods.map(
    (p) => `${p.metadata.name} ${p.status.phase} ${p.status.podIP ?? '-'} on ${p.spec.nodeName}`,
  );
  const what = `2 pods of deployment/${CHECK_APP} Running in namespace ${CHECK_NAMESPACE} (enforce=restricted) (${seconds(started)}): ${podLines.join('; ')}`;
  if (rollout.code === 0 && runningPods.length === 2) pass(what);
  else fail(`${what}\n${rollout.stdout}${rollout.stderr}`);

  // a pod as most images' examples write it: root allowed, privilege escalation, capabilities
  const unconfined = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'unconfined-probe', namespace: CHECK_NAMESPACE },
    spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
  };
  const probeFile = path.join(paths.config, 'check-unconfined.json');
  fs.writeFileSync(probeFile, JSON.stringify(unconfined));
  const refused = await kubectl(['apply', '--dry-run=server', '-f', probeFile], { check: false });
  const refusal = refused.stderr.trim().split('\n')[0];
  if (refused.code !== 0 && /violates PodSecurity "restricted/.test(refused.stderr)) {
    pass(`a pod without a restricted security context is refused there: ${refusal}`);
  } else
    fail(
      `a pod without a restricted security context was not refused: ${refused.stdout}${refused.stderr}`,
    );

  const { stdout: clusterIp } = await kubectl([
    '-n',
    CHECK_NAMESPACE,
    'get',
    'service',
    CHECK_APP,
    '-o',
    'jsonpath={.spec.clusterIP}',
  ]);
  const svcName = `${CHECK_APP}.${CHECK_NAMESPACE}.svc.${CLUSTER_DOMAIN}`;
  try {
    const answer = await waitFor(() => dnsAnswers(svcName, clusterIp.trim()), {
      timeoutMs: 30000,
      intervalMs: 500,
      what: `${svcName} to resolve`,
    });
    pass(
      `${svcName} resolves through CoreDNS (${DNS_SERVICE_IP}) to ${answer.addresses.join(', ')}, the Service's ClusterIP`,
    );
  } catch (err) {
    fail(`${svcName} does not resolve to ${clusterIp}: ${err.message}`);
  }
  await lookupFromPod({ clusterIp: clusterIp.trim(), pass, fail });
  const failed = results.filter((r) => !r).length;
  process.stdout.write(`${results.length - failed} passed, ${failed} failed\n`);
  return failed === 0 ? 0 : 1;
}

export function logTail(name, lines = 40) {
  return tailFile(logFile(name), lines);
}
