// Running a built image with runc the way the chart runs its pod: the OCI runtime config made from
// the chart's pod and container security contexts (pure functions, unit tested), and starting,
// signalling and removing one container.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tool } from './tools.mjs';

/** Kubernetes quantities as bytes: 64Mi, 512M, 1Gi, 1000. */
export function quantityBytes(text) {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(String(text).trim());
  if (!m) throw new Error(`not a Kubernetes quantity of bytes: ${JSON.stringify(text)}`);
  const unit = {
    undefined: 1,
    k: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
    Ki: 2 ** 10,
    Mi: 2 ** 20,
    Gi: 2 ** 30,
    Ti: 2 ** 40,
  }[m[2]];
  return Math.round(Number(m[1]) * unit);
}

const LIMIT_NAMES = {
  'Max open files': 'RLIMIT_NOFILE',
  'Max processes': 'RLIMIT_NPROC',
  'Max locked memory': 'RLIMIT_MEMLOCK',
  'Max stack size': 'RLIMIT_STACK',
  'Max core file size': 'RLIMIT_CORE',
};

/** The hard limits of /proc/self/limits' text, by RLIMIT name (Infinity for unlimited). */
export function hardLimits(text) {
  /** @type {Record<string, number>} */
  const limits = {};
  for (const line of text.split('\n')) {
    const name = Object.keys(LIMIT_NAMES).find((n) => line.startsWith(n));
    if (!name) continue;
    const [, hard] = line.slice(name.length).trim().split(/\s+/);
    limits[LIMIT_NAMES[name]] = hard === 'unlimited' ? Infinity : Number(hard);
  }
  return limits;
}

/**
 * The rlimits a pod's process gets: open files as many as the runtime allows, which is what
 * containerd gives (1048576) but never above this machine's hard limit: runc refuses to raise a
 * hard limit, and the container would not start.
 */
export function podRlimits(hard) {
  const nofile = Math.min(1048576, hard.RLIMIT_NOFILE ?? 1048576);
  return [{ type: 'RLIMIT_NOFILE', soft: nofile, hard: nofile }];
}

/**
 * The fields of a Kubernetes pod or container security context that the runner reads.
 * @typedef {object} SecurityContext
 * @property {number} [runAsUser]
 * @property {number} [runAsGroup]
 * @property {boolean} [runAsNonRoot]
 * @property {number} [fsGroup]
 * @property {{ type: string }} [seccompProfile]
 * @property {{ drop?: string[], add?: string[] }} [capabilities]
 * @property {boolean} [readOnlyRootFilesystem]
 * @property {boolean} [allowPrivilegeEscalation]
 */

/**
 * What the chart's pod and container security contexts ask of the runtime, checked: a context
 * the runner cannot honour is an error, not silently loosened.
 * @param {SecurityContext} [podContext]
 * @param {SecurityContext} [containerContext]
 * @param {string} [imageUser] the image's `User`: `uid` or `uid:gid`
 */
export function securityOf(podContext = {}, containerContext = {}, imageUser = '') {
  const merged = { ...podContext, ...containerContext };
  const [imageUid, imageGid] = String(imageUser || '0').split(':');
  const uid = merged.runAsUser ?? Number(imageUid);
  const gid = merged.runAsGroup ?? Number(imageGid ?? 0);
  if (!Number.isInteger(uid) || !Number.isInteger(gid)) {
    throw new Error(`the image's user ${JSON.stringify(imageUser)} is not numeric`);
  }
  if (merged.runAsNonRoot && uid === 0) throw new Error('runAsNonRoot, but the user is root (0)');
  const drop = containerContext.capabilities?.drop ?? [];
  const add = containerContext.capabilities?.add ?? [];
  const capabilities = drop.includes('ALL')
    ? add.map((c) => `CAP_${c}`)
    : ['CAP_CHOWN', 'CAP_KILL', 'CAP_NET_BIND_SERVICE', 'CAP_SETUID', 'CAP_SETGID'];
  const seccomp = merged.seccompProfile?.type ?? 'Unconfined';
  if (!['RuntimeDefault', 'Unconfined'].includes(seccomp)) {
    throw new Error(`seccompProfile ${seccomp} is not supported here`);
  }
  return {
    uid,
    gid,
    additionalGids: [
      ...new Set([gid, ...(podContext.fsGroup === undefined ? [] : [podContext.fsGroup])]),
    ],
    readonlyRoot: containerContext.readOnlyRootFilesystem === true,
    noNewPrivileges: containerContext.allowPrivilegeEscalation === false,
    capabilities,
    seccomp: seccomp === 'RuntimeDefault',
  };
}

/**
 * A seccomp profile in the spirit of the runtimes' RuntimeDefault for a container without
 * capabilities: everything is allowed but the calls that reach the kernel's administration,
 * other namespaces, other processes' memory or kernel keys, which fail with EPERM.
 */
export function runtimeDefaultSeccomp() {
  const denied = [
    'acct',
    'add_key',
    'bpf',
    'clock_adjtime',
    'clock_settime',
    'create_module',
    'delete_module',
    'fanotify_init',
    'finit_module',
    'fsconfig',
    'fsmount',
    'fsopen',
    'fspick',
    'get_kernel_syms',
    'init_module',
    'ioperm',
    'iopl',
    'kcmp',
    'kexec_file_load',
    'kexec_load',
    'keyctl',
    'lookup_dcookie',
    'mount',
    'move_mount',
    'name_to_handle_at',
    'nfsservctl',
    'open_by_handle_at',
    'open_tree',
    'perf_event_open',
    'pivot_root',
    'process_vm_readv',
    'process_vm_writev',
    'ptrace',
    'query_module',
    'quotactl',
    'reboot',
    'request_key',
    'setns',
    'settimeofday',
    'swapoff',
    'swapon',
    'sysfs',
    'umount2',
    'unshare',
    'uselib',
    'userfaultfd',
    'ustat',
    'vhangup',
  ];
  return {
    defaultAction: 'SCMP_ACT_ALLOW',
    architectures: ['SCMP_ARCH_X86_64', 'SCMP_ARCH_X86', 'SCMP_ARCH_X32'],
    syscalls: [{ names: denied, action: 'SCMP_ACT_ERRNO', errnoRet: 1 }],
  };
}

/** Paths of /proc and /sys hidden from the container, as the runtimes' defaults hide them. */
const MASKED_PATHS = [
  '/proc/acpi',
  '/proc/asound',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/sys/firmware',
  '/proc/scsi',
];
const READONLY_PATHS = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'];

/**
 * The runc config.json of one container. `security` from securityOf; `hostNetwork`: no network
 * namespace (the process reaches the machine's loopback); `tmpBytes`: the size of the /tmp
 * emptyDir; `memoryBytes`: the container's memory limit; `limits`: the machine's hard limits.
 * @param {object} options
 * @param {string} options.rootfs
 * @param {string[]} options.args
 * @param {Record<string, string>} options.env
 * @param {string} [options.cwd]
 * @param {string} options.hostname
 * @param {ReturnType<typeof securityOf>} options.security
 * @param {number} options.tmpBytes
 * @param {number} [options.memoryBytes]
 * @param {string} options.cgroupsPath
 * @param {boolean} [options.hostNetwork]
 * @param {Record<string, number>} options.limits
 * @param {Record<string, string>} [options.etcFiles] files bound read-only, by their path inside
 */
export function runcConfig({
  rootfs,
  args,
  env,
  cwd,
  hostname,
  security,
  tmpBytes,
  memoryBytes,
  cgroupsPath,
  hostNetwork = true,
  limits,
  etcFiles = {},
}) {
  const caps = security.capabilities;
  const namespaces = ['pid', 'ipc', 'uts', 'mount', ...(hostNetwork ? [] : ['network'])];
  return {
    ociVersion: '1.0.2-dev',
    process: {
      terminal: false,
      user: { uid: security.uid, gid: security.gid, additionalGids: security.additionalGids },
      args,
      env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
      cwd: cwd || '/',
      capabilities: {
        bounding: caps,
        effective: caps,
        permitted: caps,
        inheritable: [],
        ambient: [],
      },
      rlimits: podRlimits(limits),
      noNewPrivileges: security.noNewPrivileges,
    },
    root: { path: rootfs, readonly: security.readonlyRoot },
    hostname,
    mounts: containerMounts(tmpBytes, etcFiles),
    linux: {
      cgroupsPath,
      resources: {
        devices: [{ allow: false, access: 'rwm' }],
        ...(memoryBytes ? { memory: { limit: memoryBytes } } : {}),
      },
      namespaces: namespaces.map((type) => ({ type })),
      ...(security.seccomp ? { seccomp: runtimeDefaultSeccomp() } : {}),
      maskedPaths: MASKED_PATHS,
      readonlyPaths: READONLY_PATHS,
    },
  };
}

/**
 * One mount of a runc config.
 * @typedef {{ destination: string, type: string, source: string, options?: string[] }} Mount
 */

/**
 * The container's mounts: the kernel's file systems, the /tmp emptyDir of `tmpBytes`, and the
 * files the kubelet would mount (`etcFiles`).
 * @param {number} tmpBytes
 * @param {Record<string, string>} etcFiles
 * @returns {Mount[]}
 */
function containerMounts(tmpBytes, etcFiles) {
  return [
    { destination: '/proc', type: 'proc', source: 'proc' },
    {
      destination: '/dev',
      type: 'tmpfs',
      source: 'tmpfs',
      options: ['nosuid', 'strictatime', 'mode=755', 'size=65536k'],
    },
    {
      destination: '/dev/pts',
      type: 'devpts',
      source: 'devpts',
      options: ['nosuid', 'noexec', 'newinstance', 'ptmxmode=0666', 'mode=0620', 'gid=5'],
    },
    {
      destination: '/dev/shm',
      type: 'tmpfs',
      source: 'shm',
      options: ['nosuid', 'noexec', 'nodev', 'mode=1777', 'size=65536k'],
    },
    {
      destination: '/dev/mqueue',
      type: 'mqueue',
      source: 'mqueue',
      options: ['nosuid', 'noexec', 'nodev'],
    },
    {
      destination: '/sys',
      type: 'sysfs',
      source: 'sysfs',
      options: ['nosuid', 'noexec', 'nodev', 'ro'],
    },
    {
      destination: '/sys/fs/cgroup',
      type: 'cgroup',
      source: 'cgroup',
      options: ['nosuid', 'noexec', 'nodev', 'relatime', 'ro'],
    },
    // the emptyDir the chart mounts at /tmp, writable by everyone like an emptyDir
    {
      destination: '/tmp',
      type: 'tmpfs',
      source: 'tmpfs',
      options: ['nosuid', 'nodev', 'mode=1777', `size=${tmpBytes}`],
    },
    // what the kubelet mounts into every container (/etc/hosts, /etc/resolv.conf, ...)
    ...Object.entries(etcFiles).map(([destination, source]) => ({
      destination,
      type: 'bind',
      source,
      options: ['rbind', 'ro', 'nosuid', 'nodev', 'noexec'],
    })),
  ];
}

/**
 * Starts `runc run` for a bundle in the foreground (its output appended to `logFile`). Returns
 * {exited}: a promise of {code, signal, seconds since start}.
 * @param {{ runc: string, id: string, bundle: string, logFile: string }} options
 * @returns {{ exited: Promise<{ code: number | null, signal: NodeJS.Signals | null,
 *   seconds: number, error?: Error }> }}
 */
export function startContainer({ runc, id, bundle, logFile }) {
  const out = fs.openSync(logFile, 'a');
  const started = Date.now();
  const child = spawn(runc, ['run', '--bundle', bundle, id], {
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  const exited = new Promise((resolve) => {
    child.on('error', (error) => resolve({ code: 127, signal: null, error, seconds: 0 }));
    child.on('close', (code, signal) =>
      resolve({ code, signal, seconds: (Date.now() - started) / 1000 }),
    );
  });
  return { exited };
}

export function signalContainer(runc, id, signal) {
  return tool(runc, ['kill', id, signal], { check: false });
}

/** Removes the container whatever its state (a stopped one, or one left by an earlier run). */
export function removeContainer(runc, id) {
  return tool(runc, ['delete', '--force', id], { check: false });
}

/** Writes `config` as the bundle's config.json; returns the bundle folder. */
export function writeBundle(dir, config) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
  return dir;
}
