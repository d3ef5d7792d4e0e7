// The runc config made from the chart's security contexts: `node --test tools/k8s-lab/src/images/runc.test.mjs`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  hardLimits,
  podRlimits,
  quantityBytes,
  runcConfig,
  runtimeDefaultSeccomp,
  securityOf,
} from './runc.mjs';

// The chart's defaults (charts/herald/values.yaml: podSecurityContext, securityContext).
const podContext = {
  runAsNonRoot: true,
  runAsUser: 1000,
  runAsGroup: 1000,
  fsGroup: 1000,
  seccompProfile: { type: 'RuntimeDefault' },
};
const containerContext = {
  runAsNonRoot: true,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
};

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max stack size            8388608              unlimited            bytes
Max processes             96365                96365                processes
Max open files            20000                20000                files
Max locked memory         8388608              8388608              bytes
`;

function config(overrides = {}) {
  return runcConfig({
    rootfs: '/var/lib/containers/storage/overlay/x/merged',
    args: ['node', 'dist/index.js'],
    env: { PATH: '/usr/local/bin:/usr/bin', PORT: '41000' },
    cwd: '/app/services/auth',
    hostname: 'herald-auth',
    security: securityOf(podContext, containerContext, '1000:1000'),
    tmpBytes: quantityBytes('64Mi'),
    memoryBytes: quantityBytes('512Mi'),
    cgroupsPath: '/herald-images/herald-images-auth',
    limits: hardLimits(LIMITS),
    ...overrides,
  });
}

test('hard limits are read from /proc/self/limits', () => {
  const limits = hardLimits(LIMITS);
  assert.equal(limits.RLIMIT_NOFILE, 20000);
  assert.equal(limits.RLIMIT_STACK, Infinity);
  assert.equal(limits.RLIMIT_NPROC, 96365);
});

test('no rlimit is above the machine hard limit (runc would refuse to start)', () => {
  const limits = hardLimits(LIMITS);
  for (const r of config().process.rlimits) {
    assert.ok(r.hard <= limits[r.type], `${r.type} hard ${r.hard} > ${limits[r.type]}`);
    assert.ok(r.soft <= r.hard);
  }
  // where the machine allows more, a pod's usual 1048576 open files
  assert.deepEqual(podRlimits({ RLIMIT_NOFILE: Infinity }), [
    { type: 'RLIMIT_NOFILE', soft: 1048576, hard: 1048576 },
  ]);
});

test('the chart security context: uid/gid 1000, fsGroup, read-only root, no capabilities', () => {
  const c = config();
  assert.deepEqual(c.process.user, { uid: 1000, gid: 1000, additionalGids: [1000] });
  assert.equal(c.root.readonly, true);
  assert.equal(c.process.noNewPrivileges, true);
  for (const set of Object.values(c.process.capabilities)) assert.deepEqual(set, []);
  assert.ok(c.linux.seccomp, 'RuntimeDefault asks for a seccomp profile');
  assert.equal(c.linux.resources.memory.limit, 512 * 2 ** 20);
});

test('/tmp is a writable tmpfs of the emptyDir size; the rest of the root is read-only', () => {
  const tmp = config().mounts.find((m) => m.destination === '/tmp');
  assert.equal(tmp.type, 'tmpfs');
  assert.ok(tmp.options.includes(`size=${64 * 2 ** 20}`));
  assert.ok(tmp.options.includes('mode=1777'));
});

test('host network: no network namespace; the others are the container own', () => {
  const types = config().linux.namespaces.map((n) => n.type);
  assert.ok(!types.includes('network'));
  for (const t of ['pid', 'mount', 'ipc', 'uts']) assert.ok(types.includes(t));
  const isolated = config({ hostNetwork: false }).linux.namespaces.map((n) => n.type);
  assert.ok(isolated.includes('network'));
});

test('environment and command go through unchanged', () => {
  const c = config();
  assert.deepEqual(c.process.args, ['node', 'dist/index.js']);
  assert.ok(c.process.env.includes('PORT=41000'));
  assert.equal(c.process.cwd, '/app/services/auth');
});

test('runAsNonRoot refuses a root user; an unsupported seccomp profile is an error', () => {
  assert.throws(() => securityOf({ runAsNonRoot: true }, {}, '0:0'), /runAsNonRoot/);
  assert.throws(
    () => securityOf({ seccompProfile: { type: 'Localhost' } }, {}, '1000:1000'),
    /seccompProfile Localhost/,
  );
  // without runAsUser the image's USER counts
  assert.equal(securityOf({ runAsNonRoot: true }, {}, '1000:1000').uid, 1000);
});

test('the seccomp profile denies namespace and kernel administration calls', () => {
  const profile = runtimeDefaultSeccomp();
  const denied = profile.syscalls.flatMap((s) => (s.action === 'SCMP_ACT_ERRNO' ? s.names : []));
  for (const call of ['unshare', 'setns', 'mount', 'ptrace', 'bpf', 'keyctl']) {
    assert.ok(denied.includes(call), call);
  }
});

test('quantities', () => {
  assert.equal(quantityBytes('64Mi'), 67108864);
  assert.equal(quantityBytes('1G'), 1e9);
  assert.throws(() => quantityBytes('64MB'), /quantity/);
});
