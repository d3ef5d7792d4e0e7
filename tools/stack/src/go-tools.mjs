// Pinned Go tools (helm, kubeconform, helm-unittest, k6, toxiproxy, registry, syft, cosign), built from the Go module proxy with
// `go install` into .herald/tools/go/bin, once: a `<name>.version` file beside each binary records
// what was built, and a later call with the same pin returns the binary without building.
// Node built-ins only. Usage from scripts: `const k6 = ensureGoTool('k6')`; from a shell:
// `node tools/stack/src/go-tools.mjs k6 helm` prints the paths (one a line).
// The Go module and build caches are Go's own (GOMODCACHE, GOCACHE): they outlive a clean clone,
// which keeps a rebuild after `rm -rf .herald` short.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { UsageError, commandLine } from './args.mjs';
import { repoRoot as root } from './config.mjs';

export const goBin = path.join(root, '.herald', 'tools', 'go', 'bin');

// `pkg` is what `go install` builds; the binary is named after its last path element, or
// `binary` (then built with `go build -o` inside the module, as `inModule`).
// `inModule`: the module's go.mod has `replace` directives, which `go install pkg@version`
// refuses; such a module is downloaded at its pinned version and installed from inside its own
// (read-only, checksum-verified) directory, where it is the main module and its replaces apply.
export const goTools = {
  helm: {
    module: 'helm.sh/helm/v3',
    version: 'v3.22.0',
    pkg: 'helm.sh/helm/v3/cmd/helm',
    // what helm's own Makefile stamps, so that `helm version` tells the truth
    ldflags: '-X helm.sh/helm/v3/internal/version.version=v3.22.0',
  },
  kubeconform: {
    module: 'github.com/yannh/kubeconform',
    version: 'v0.8.0',
    pkg: 'github.com/yannh/kubeconform/cmd/kubeconform',
  },
  'helm-unittest': {
    module: 'github.com/helm-unittest/helm-unittest',
    version: 'v1.1.2',
    pkg: './cmd/helm-unittest',
    inModule: true,
  },
  k6: { module: 'go.k6.io/k6', version: 'v1.8.1', pkg: 'go.k6.io/k6' },
  // The fault proxy of the fault suite (tools/stack/src/toxiproxy.mjs). Its command is
  // `cmd/server`, named here as its own Makefile names it.
  toxiproxy: {
    module: 'github.com/Shopify/toxiproxy/v2',
    version: 'v2.12.0',
    pkg: './cmd/server',
    inModule: true,
    binary: 'toxiproxy-server',
    ldflags: '-X github.com/Shopify/toxiproxy/v2.Version=2.12.0',
  },
  // The release step (tools/release): a local OCI registry (CNCF distribution) that the release
  // pushes to and the test cluster pulls from, SBOMs of the images (syft), and signatures made
  // with a key (cosign).
  registry: {
    module: 'github.com/distribution/distribution/v3',
    version: 'v3.0.0',
    pkg: 'github.com/distribution/distribution/v3/cmd/registry',
    ldflags: '-X github.com/distribution/distribution/v3/version.version=v3.0.0',
  },
  syft: {
    module: 'github.com/anchore/syft',
    version: 'v1.57.1',
    pkg: 'github.com/anchore/syft/cmd/syft',
    ldflags: '-X main.version=1.57.1',
  },
  cosign: {
    module: 'github.com/sigstore/cosign/v3',
    version: 'v3.1.3',
    pkg: 'github.com/sigstore/cosign/v3/cmd/cosign',
    ldflags: '-X sigs.k8s.io/release-utils/version.gitVersion=v3.1.3',
  },
};

// What a build depends on; a binary whose stamp differs is rebuilt.
const BUILD_FLAGS = 'CGO_ENABLED=0 -trimpath';
function stampOf(tool) {
  return (
    `${tool.module}@${tool.version} ${tool.pkg} ${BUILD_FLAGS} ${tool.ldflags ?? ''}`.trim() + '\n'
  );
}

function run(args, options) {
  const result = spawnSync('go', args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
    ...options,
  });
  if (/** @type {NodeJS.ErrnoException | undefined} */ (result.error)?.code === 'ENOENT') {
    throw new Error('go-tools: `go` is not on PATH; Go 1.26 or newer builds the pinned tools');
  }
  if (result.status !== 0) {
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim();
    throw new Error(`go-tools: go ${args.join(' ')} failed:\n${output}`);
  }
  return result.stdout;
}

const sleepCell = new Int32Array(new SharedArrayBuffer(4));
function sleepSync(ms) {
  Atomics.wait(sleepCell, 0, 0, ms);
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

// One build of a tool at a time across processes (the chart check and the load test may ask
// for tools at once): a lock directory holding its owner's pid; a dead owner's lock is taken over.
function withLock(lockDir, fn) {
  for (;;) {
    try {
      fs.mkdirSync(lockDir);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const owner = Number.parseInt(readOrEmpty(path.join(lockDir, 'pid')), 10);
      if (Number.isInteger(owner) && !isAlive(owner)) {
        fs.rmSync(lockDir, { recursive: true, force: true });
        continue;
      }
      sleepSync(500);
    }
  }
  try {
    fs.writeFileSync(path.join(lockDir, 'pid'), String(process.pid));
    return fn();
  } finally {
    fs.rmSync(lockDir, { recursive: true, force: true });
  }
}

function readOrEmpty(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function isCurrent(binary, stampFile, stamp) {
  return fs.existsSync(binary) && readOrEmpty(stampFile) === stamp;
}

/** Builds the pinned tool `name` unless it is already there; returns the binary's path. */
export function ensureGoTool(name) {
  const tool = goTools[name];
  if (!tool) {
    throw new Error(`go-tools: unknown tool ${name} (known: ${Object.keys(goTools).join(', ')})`);
  }
  const binary = path.join(goBin, tool.binary ?? path.basename(tool.pkg));
  const stampFile = path.join(goBin, `${name}.version`);
  const stamp = stampOf(tool);
  if (isCurrent(binary, stampFile, stamp)) return binary;

  fs.mkdirSync(goBin, { recursive: true });
  return withLock(path.join(goBin, `.${name}.lock`), () => {
    // another process may have built it while this one waited for the lock
    if (isCurrent(binary, stampFile, stamp)) return binary;
    const started = Date.now();
    // CGO off: static binaries, and no C compiler needed on the machine
    const env = { ...process.env, GOBIN: goBin, CGO_ENABLED: '0' };
    // -trimpath: no module-cache paths in the build cache's keys, so a fresh GOMODCACHE (a clean
    // checkout elsewhere, CI) still reuses the compiled packages
    const flags = ['-trimpath', ...(tool.ldflags ? ['-ldflags', tool.ldflags] : [])];
    fs.rmSync(stampFile, { force: true });
    if (tool.inModule) {
      const info = JSON.parse(
        run(['mod', 'download', '-json', `${tool.module}@${tool.version}`], { env }),
      );
      const build = tool.binary ? ['build', '-o', binary] : ['install'];
      run([...build, '-mod=readonly', ...flags, tool.pkg], { env, cwd: info.Dir });
    } else {
      run(['install', ...flags, `${tool.pkg}@${tool.version}`], { env, cwd: root });
    }
    fs.writeFileSync(stampFile, stamp);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    process.stderr.write(`go-tools: built ${name} ${tool.version} in ${seconds}s\n`);
    return binary;
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const usage = `Usage: node tools/stack/src/go-tools.mjs [${Object.keys(goTools).join('|')} ...]

Builds the named pinned Go tools (all by default) when missing and prints their paths.`;
  const { positionals: names } = commandLine(usage, {
    allowPositionals: true,
    check({ positionals }) {
      const unknown = positionals.filter((name) => !Object.hasOwn(goTools, name));
      if (unknown.length > 0) throw new UsageError(`unknown tool ${unknown.join(', ')}`);
    },
  });
  try {
    for (const name of names.length > 0 ? names : Object.keys(goTools)) {
      console.log(ensureGoTool(name));
    }
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
