// What the cluster needs from the machine and leaves on it: Debian packages, two kernel settings
// (restored by `down`), an iptables chain that keeps pod traffic on the machine, and the cleanup of
// what pods leave behind (mounts, the bridge, iptables chains, pod cgroups). The iptables cleanup
// is planned by a pure function (unit tested) from `iptables-save` output.
import fs from 'node:fs';
import path from 'node:path';
import { ensureSystemPackages } from '@herald/stack/system-packages.mjs';
import { readText } from '@herald/stack/files.mjs';
import { run, which } from '@herald/stack/processes.mjs';
import { BRIDGE, CLUSTER_CIDR, CNI_NETWORK, SERVICE_CIDR } from './config.mjs';

const SBIN = ['/usr/local/sbin', '/usr/sbin', '/sbin'];
const cniPlugin = (name) => () =>
  fs.existsSync(`/usr/lib/cni/${name}`) ? `/usr/lib/cni/${name}` : null;

/** Debian packages; `daemon`: the package's own service, kept off (ours runs on other ports). */
export const REQUIREMENTS = {
  containerd: { find: () => which('containerd', SBIN), apt: 'containerd', daemon: 'containerd' },
  ctr: { find: () => which('ctr', SBIN), apt: 'containerd' },
  runc: { find: () => which('runc', SBIN), apt: 'runc' },
  etcd: { find: () => which('etcd', SBIN), apt: 'etcd-server', daemon: 'etcd' },
  bridge: { find: cniPlugin('bridge'), apt: 'containernetworking-plugins' },
  hostLocal: { find: cniPlugin('host-local'), apt: 'containernetworking-plugins' },
  portmap: { find: cniPlugin('portmap'), apt: 'containernetworking-plugins' },
  // kube-proxy clears stale UDP conntrack entries with it (DNS after a CoreDNS restart)
  conntrack: { find: () => which('conntrack', SBIN), apt: 'conntrack' },
  iptables: { find: () => which('iptables', SBIN), apt: 'iptables' },
  iptablesSave: { find: () => which('iptables-save', SBIN), apt: 'iptables' },
  ip: { find: () => which('ip', SBIN), apt: 'iproute2' },
  buildah: { find: () => which('buildah'), apt: 'buildah' },
  gcc: { find: () => which('gcc'), apt: 'gcc' },
  // the static C library for the pause program
  libcStatic: {
    find: () => (fs.existsSync('/usr/lib/x86_64-linux-gnu/libc.a') ? 'libc.a' : null),
    apt: 'libc6-dev',
  },
  openssl: { find: () => which('openssl'), apt: 'openssl' },
};

export async function ensureHostPackages() {
  if (!which('go')) {
    throw new Error(
      'cluster: `go` (1.26 or newer) is not on PATH; it builds Kubernetes and CoreDNS',
    );
  }
  return ensureSystemPackages({ requirements: REQUIREMENTS });
}

const SYSCTLS = {
  // a pod reaching a Service whose endpoint is another pod is routed through the node
  'net.ipv4.ip_forward': '1',
  // kube-proxy's rules must see traffic between pods on the same bridge
  'net.bridge.bridge-nf-call-iptables': '1',
};

/** What the kubelet sets for itself (protectKernelDefaults: false); `down` puts them back. */
const KUBELET_SYSCTLS = [
  'vm.overcommit_memory',
  'vm.panic_on_oom',
  'kernel.panic',
  'kernel.panic_on_oops',
  'kernel.keys.root_maxkeys',
  'kernel.keys.root_maxbytes',
];

const sysctlFile = (key) => `/proc/sys/${key.replaceAll('.', '/')}`;

/** Kernel modules and settings; the previous values (and the kubelet's) are kept in `stateFile`. */
export async function prepareKernel(stateFile) {
  if (!fs.existsSync('/proc/sys/net/bridge')) await run('modprobe', ['br_netfilter']);
  if (!/\toverlay$/m.test(readText('/proc/filesystems') ?? '')) {
    await run('modprobe', ['overlay']);
  }
  const state = JSON.parse(readText(stateFile) ?? '{}');
  state.sysctls ??= {};
  for (const [key, value] of Object.entries(SYSCTLS)) {
    const current = (readText(sysctlFile(key)) ?? '').trim();
    if (!(key in state.sysctls)) state.sysctls[key] = current;
    if (current !== value) fs.writeFileSync(sysctlFile(key), value);
  }
  for (const key of KUBELET_SYSCTLS) {
    const current = readText(sysctlFile(key));
    if (current !== null && !(key in state.sysctls)) state.sysctls[key] = current.trim();
  }
  fs.writeFileSync(stateFile, `${JSON.stringify(state, null, 2)}\n`);
}

export function restoreKernel(stateFile) {
  const state = JSON.parse(readText(stateFile) ?? '{}');
  const restored = [];
  for (const [key, value] of Object.entries(state.sysctls ?? {})) {
    if (value === '') continue;
    const current = (readText(sysctlFile(key)) ?? '').trim();
    if (current === value) continue;
    try {
      fs.writeFileSync(sysctlFile(key), value);
      restored.push(`${key}=${value}`);
    } catch (err) {
      restored.push(`${key} (not restored to ${value}: ${err.code})`);
    }
  }
  fs.rmSync(stateFile, { force: true });
  return restored;
}

export const GUARD_CHAIN = 'HERALD-CLUSTER';

/**
 * The rules of the guard chain (mangle table, first in POSTROUTING, where the outgoing link is
 * the one routing finally chose, also for the node's own packets that kube-proxy rewrote):
 * nothing addressed to a pod or Service address, or sent from a pod, leaves by any link but the
 * cluster's bridge. An address no Service answers (before kube-proxy has its rules, or a stale
 * endpoint) or a pod's stray packet is dropped here instead of going to the default route.
 */
export function guardRules() {
  const drop = ['-j', 'DROP'];
  return [
    ['-d', SERVICE_CIDR, '-m', 'comment', '--comment', 'no Service behind it', ...drop],
    ['-d', CLUSTER_CIDR, '!', '-o', BRIDGE, '-m', 'comment', '--comment', 'to pods', ...drop],
    ['-s', CLUSTER_CIDR, '!', '-o', BRIDGE, '-m', 'comment', '--comment', 'from pods', ...drop],
  ];
}

async function iptables(args, check = true) {
  return run('iptables', ['-w', '5', ...args], { check });
}

export async function installGuard() {
  const table = ['-t', 'mangle'];
  await iptables([...table, '-N', GUARD_CHAIN], false);
  await iptables([...table, '-F', GUARD_CHAIN]);
  for (const rule of guardRules()) await iptables([...table, '-A', GUARD_CHAIN, ...rule]);
  const present = await iptables([...table, '-C', 'POSTROUTING', '-j', GUARD_CHAIN], false);
  if (present.code !== 0) await iptables([...table, '-I', 'POSTROUTING', '1', '-j', GUARD_CHAIN]);
}

/** Splits one rule of iptables-save output into arguments (double quotes, backslash escapes). */
export function splitRule(line) {
  const args = [];
  let current = '';
  let quoted = false;
  let hasToken = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '\\' && i + 1 < line.length) {
      current += line[++i];
      hasToken = true;
    } else if (c === '"') {
      quoted = !quoted;
      hasToken = true;
    } else if (/\s/.test(c) && !quoted) {
      if (hasToken) args.push(current);
      current = '';
      hasToken = false;
    } else {
      current += c;
      hasToken = true;
    }
  }
  if (hasToken) args.push(current);
  return args;
}

/** `{ table: { chains: Set, rules: [{ chain, args }] } }` of iptables-save output. */
export function parseIptablesSave(text) {
  const tables = {};
  let table = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('*')) {
      table = { chains: new Set(), rules: [] };
      tables[line.slice(1)] = table;
    } else if (!table || line === '' || line.startsWith('#') || line === 'COMMIT') {
      continue;
    } else if (line.startsWith(':')) {
      table.chains.add(line.slice(1).split(/\s+/)[0]);
    } else if (line.startsWith('-A ')) {
      const [, chain, ...args] = splitRule(line);
      table.rules.push({ chain, args });
    }
  }
  return tables;
}

function jumpTarget(args) {
  const i = args.findIndex((a) => a === '-j' || a === '-g');
  return i === -1 ? null : args[i + 1];
}

/**
 * The iptables commands (argument lists, table first) that remove what the cluster added: the
 * guard chain, every KUBE-* chain (kube-proxy's and the kubelet's), and the CNI-* chains of the
 * cluster's pod network (those whose rules name its network or addresses), each after the rules
 * elsewhere that jump to it. Chains of other CNI users are left alone.
 */
export function planIptablesCleanup(saveText) {
  const commands = [];
  const podPrefix = CLUSTER_CIDR.split('.').slice(0, 2).join('.') + '.';
  for (const [table, { chains, rules }] of Object.entries(parseIptablesSave(saveText))) {
    const ours = new Set();
    for (const chain of chains) {
      if (chain === GUARD_CHAIN || chain.startsWith('KUBE-')) ours.add(chain);
      if (chain.startsWith('CNI-')) {
        const own = rules.filter((r) => r.chain === chain);
        const mentionsUs = own.some((r) =>
          r.args.some((a) => a.includes(`"${CNI_NETWORK}"`) || a.startsWith(podPrefix)),
        );
        if (mentionsUs) ours.add(chain);
      }
    }
    if (ours.size === 0) continue;
    for (const rule of rules) {
      if (!ours.has(rule.chain) && ours.has(jumpTarget(rule.args))) {
        commands.push(['-t', table, '-D', rule.chain, ...rule.args]);
      }
    }
    for (const chain of ours) commands.push(['-t', table, '-F', chain]);
    for (const chain of ours) commands.push(['-t', table, '-X', chain]);
  }
  return commands;
}

/** Both families: kube-proxy and the kubelet write IPv6 rules too on a dual-stack machine. */
export async function cleanIptables() {
  const removed = [];
  for (const [family, save, tool] of [
    ['ipv4', 'iptables-save', 'iptables'],
    ['ipv6', 'ip6tables-save', 'ip6tables'],
  ]) {
    const { code, stdout } = await run(save, [], { check: false });
    if (code !== 0) continue;
    const commands = planIptablesCleanup(stdout);
    for (const args of commands) await run(tool, ['-w', '5', ...args], { check: false });
    removed.push(...commands.filter((c) => c[2] === '-X').map((c) => `${family}/${c[1]}/${c[3]}`));
  }
  return removed;
}

/** Mount points at or below `dir`, deepest first (from /proc/self/mountinfo). */
export function mountsBelow(dir, mountinfo = readText('/proc/self/mountinfo') ?? '') {
  const base = path.resolve(dir);
  const points = mountinfo
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter(Boolean)
    // mountinfo escapes spaces and the like as octal
    .map((p) => p.replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8))))
    .filter((p) => p === base || p.startsWith(`${base}/`));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

export async function unmountBelow(dir) {
  const done = [];
  // a mount can hide another one at the same point: repeat until none is left
  for (let round = 0; round < 5; round++) {
    const points = mountsBelow(dir);
    if (points.length === 0) break;
    for (const point of points) {
      const result = await run('umount', [point], { check: false });
      if (result.code !== 0) await run('umount', ['-l', point], { check: false });
      done.push(point);
    }
  }
  return [...new Set(done)];
}

export async function removeBridge() {
  if (!fs.existsSync(`/sys/class/net/${BRIDGE}`)) return false;
  await run('ip', ['link', 'delete', BRIDGE], { check: false });
  return true;
}

/**
 * The folders containerd 1.6 makes in /run/containerd whatever its configuration says (its shims'
 * socket folder): removed when empty and when no other containerd runs.
 */
export function removeRunFolders(otherContainerdRunning) {
  if (otherContainerdRunning) return [];
  const removed = [];
  for (const dir of [
    '/run/containerd/s',
    '/run/containerd/runc/k8s.io',
    '/run/containerd/runc',
    '/run/containerd',
  ]) {
    try {
      fs.rmdirSync(dir);
      removed.push(dir);
    } catch {
      // not there, or not empty: someone else's
    }
  }
  return removed;
}

/** The CNI results cache that containerd keeps in the machine's /var/lib/cni for our network. */
export function removeCniCache() {
  const dir = '/var/lib/cni/results';
  let removed = 0;
  for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    if (name.startsWith(`${CNI_NETWORK}-`)) {
      fs.rmSync(path.join(dir, name), { force: true });
      removed++;
    }
  }
  return removed;
}

/** Processes still in the kubelet's pod cgroups (cgroup v1, cgroupfs driver). */
function podCgroupDirs() {
  const root = '/sys/fs/cgroup';
  const dirs = [];
  for (const controller of fs.existsSync(root) ? fs.readdirSync(root) : []) {
    const top = path.join(root, controller, 'kubepods');
    if (!fs.existsSync(top)) continue;
    const stack = [top];
    while (stack.length) {
      const d = stack.pop();
      dirs.push(d);
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        if (e.isDirectory()) stack.push(path.join(d, e.name));
      }
    }
  }
  return dirs;
}

export function podProcesses() {
  const pids = new Set();
  for (const dir of podCgroupDirs()) {
    for (const pid of (readText(path.join(dir, 'cgroup.procs')) ?? '').split('\n')) {
      if (pid.trim()) pids.add(Number(pid));
    }
  }
  return [...pids];
}

/** Kills what is left in the pod cgroups and removes them, deepest first. */
export function removePodCgroups() {
  for (const pid of podProcesses()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  const dirs = podCgroupDirs().sort((a, b) => b.length - a.length);
  let removed = 0;
  for (const dir of dirs) {
    try {
      fs.rmdirSync(dir);
      removed++;
    } catch {
      // busy a moment longer (a process being reaped); the next `down` takes it
    }
  }
  return removed;
}
