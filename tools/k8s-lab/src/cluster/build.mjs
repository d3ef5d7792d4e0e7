// The cluster's binaries, built once from the Go module proxy and kept under .herald/tools:
// Kubernetes' server components and kubectl from the k8s.io/kubernetes module, the pause program
// from its C source in that module, and CoreDNS from its own module. A stamp file beside them
// records the recipe; a later call with the same recipe returns at once.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '@herald/stack/processes.mjs';
import { sha256 } from '@herald/stack/files.mjs';
import { say } from '@herald/stack/output.mjs';
import { COREDNS_VERSION, KUBERNETES_VERSION, toolsDirs } from './config.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

/** A CRI client of ours (cri-reset/main.go), built in the same module tree as the kubelet. */
export const CRI_RESET = 'herald-cri-reset';

export const KUBE_BINARIES = [
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kubelet',
  'kube-proxy',
  'kubectl',
];

/** The version stamps every component-base based binary reports (what `make` would set). */
export function kubeLdflags(version = KUBERNETES_VERSION) {
  const [major, minor] = version.replace(/^v/, '').split('.');
  const pkg = 'k8s.io/component-base/version';
  return [
    // no symbol table or DWARF, as release builds: a third of the size
    '-s -w',
    `-X ${pkg}.gitVersion=${version}`,
    `-X ${pkg}.gitMajor=${major}`,
    `-X ${pkg}.gitMinor=${minor}`,
    `-X ${pkg}.gitTreeState=clean`,
  ].join(' ');
}

/**
 * The k8s.io/kubernetes go.mod made buildable outside its repository: the `replace` lines that
 * point into ./staging are dropped and the staging modules' `v0.0.0` requirements become the
 * published `v0.<minor>.<patch>` releases cut from the same tree.
 */
export function rewriteGoMod(text, version = KUBERNETES_VERSION) {
  const staging = `v0.${version.replace(/^v\d+\./, '')}`;
  const stagingModules = new Set();
  const kept = [];
  let inReplaceBlock = false;
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (/^replace\s*\($/.test(trimmed)) {
      inReplaceBlock = true;
      kept.push(line);
      continue;
    }
    if (inReplaceBlock && trimmed === ')') inReplaceBlock = false;
    const body = inReplaceBlock ? trimmed : trimmed.replace(/^replace\s+/, '');
    const m = /^(\S+)\s+=>\s+\.\/staging\//.exec(body);
    if ((inReplaceBlock || trimmed.startsWith('replace ')) && m) {
      stagingModules.add(m[1]);
      continue;
    }
    kept.push(line);
  }
  const out = kept
    .join('\n')
    // an emptied `replace ( )` block is legal but noise
    .replace(/\nreplace \(\s*\)\n/g, '\n')
    .split('\n')
    .map((line) => {
      const m = /^(\s*)(\S+) v0\.0\.0(\s*(\/\/.*)?)$/.exec(line);
      return m && stagingModules.has(m[2]) ? `${m[1]}${m[2]} ${staging}${m[3]}` : line;
    })
    .join('\n');
  return { text: out, stagingModules: [...stagingModules].sort() };
}

function recipeStamp() {
  const criReset = fs.readFileSync(path.join(here, 'cri-reset', 'main.go'));
  return `${KUBERNETES_VERSION} ${KUBE_BINARIES.join(',')} ${kubeLdflags()} ${CRI_RESET}:${sha256(criReset)} pause(gcc -Os -static) coredns ${COREDNS_VERSION} CGO_ENABLED=0 -s -w\n`;
}

function readOrEmpty(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

export function binariesPresent() {
  const dirs = toolsDirs();
  return (
    readOrEmpty(dirs.stamp) === recipeStamp() &&
    [...KUBE_BINARIES, CRI_RESET, 'pause'].every((b) => fs.existsSync(path.join(dirs.kube, b))) &&
    fs.existsSync(path.join(dirs.coredns, 'coredns'))
  );
}

async function go(args, options) {
  return run('go', args, { timeoutMs: 60 * 60000, ...options });
}

/** Copies the module out of the read-only module cache, writable, without what the build skips. */
function copyModule(from, to) {
  fs.rmSync(to, { recursive: true, force: true });
  // staging/ is replaced by the published modules and vendor/ is unused with -mod=mod
  const skip = new Set(['staging', 'vendor', 'docs', 'CHANGELOG', 'go.work', 'go.work.sum']);
  fs.cpSync(from, to, {
    recursive: true,
    filter: (src) => !(path.dirname(src) === from && skip.has(path.basename(src))),
  });
  execChmod(to);
}

function execChmod(dir) {
  const stack = [dir];
  while (stack.length) {
    const d = stack.pop();
    fs.chmodSync(d, 0o755);
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.isFile()) fs.chmodSync(p, 0o644);
    }
  }
}

/**
 * Builds whatever is missing; returns `{ built, seconds }`. Output of the builds goes to
 * `logFile`.
 * @param {{ logFile?: string }} [options]
 */
export async function ensureBinaries({ logFile } = {}) {
  if (binariesPresent()) return { built: false, seconds: 0 };
  const dirs = toolsDirs();
  fs.mkdirSync(dirs.kube, { recursive: true });
  fs.mkdirSync(dirs.coredns, { recursive: true });
  fs.rmSync(dirs.stamp, { force: true });
  const started = Date.now();
  const opts = logFile ? { appendTo: logFile } : {};

  say(`cluster: building Kubernetes ${KUBERNETES_VERSION} (${KUBE_BINARIES.join(', ')}), once`);
  const { stdout } = await go([
    'mod',
    'download',
    '-json',
    `k8s.io/kubernetes@${KUBERNETES_VERSION}`,
  ]);
  const moduleDir = JSON.parse(stdout).Dir;
  const src = path.join(dirs.kube, 'src');
  copyModule(moduleDir, src);
  const goMod = path.join(src, 'go.mod');
  const { text, stagingModules } = rewriteGoMod(fs.readFileSync(goMod, 'utf8'));
  if (stagingModules.length === 0) throw new Error(`build: no staging replaces in ${goMod}`);
  fs.writeFileSync(goMod, text);
  const criResetDir = path.join(src, 'cmd', CRI_RESET);
  fs.mkdirSync(criResetDir, { recursive: true });
  fs.copyFileSync(path.join(here, 'cri-reset', 'main.go'), path.join(criResetDir, 'main.go'));
  const env = { ...process.env, GOFLAGS: '-mod=mod', GOWORK: 'off' };
  await go(
    [
      'build',
      '-trimpath',
      '-ldflags',
      kubeLdflags(),
      '-o',
      `${dirs.kube}${path.sep}`,
      ...[...KUBE_BINARIES, CRI_RESET].map((b) => `./cmd/${b}`),
    ],
    { cwd: src, env, ...opts },
  );
  say(`cluster: Kubernetes binaries built in ${((Date.now() - started) / 1000).toFixed(0)} s`);

  // the pod sandbox's one process: static, so the image needs nothing else
  await run(
    'gcc',
    [
      '-Os',
      '-static',
      '-DVERSION=v3.10',
      '-o',
      path.join(dirs.kube, 'pause'),
      path.join(src, 'build', 'pause', 'linux', 'pause.c'),
    ],
    opts,
  );
  fs.rmSync(src, { recursive: true, force: true });

  const corednsStarted = Date.now();
  say(`cluster: building CoreDNS ${COREDNS_VERSION}, once`);
  await go(
    ['install', '-trimpath', '-ldflags', '-s -w', `github.com/coredns/coredns@${COREDNS_VERSION}`],
    {
      cwd: dirs.coredns,
      // static: the image holds this one file
      env: { ...process.env, GOBIN: dirs.coredns, CGO_ENABLED: '0' },
      ...opts,
    },
  );
  say(`cluster: CoreDNS built in ${((Date.now() - corednsStarted) / 1000).toFixed(0)} s`);
  fs.writeFileSync(dirs.stamp, recipeStamp());
  return { built: true, seconds: (Date.now() - started) / 1000 };
}
