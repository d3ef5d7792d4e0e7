// The images the cluster runs without any registry: the pause image (the pod sandbox) and CoreDNS,
// each a static binary in an image FROM scratch committed with buildah as an OCI archive beside
// the binary, then imported into containerd's k8s.io namespace. Herald's own images are not
// imported: the node pulls them from the registry a release was pushed to.
import fs from 'node:fs';
import path from 'node:path';
import { run } from '@herald/stack/processes.mjs';
import { COREDNS_IMAGE, PAUSE_IMAGE, toolsDirs } from './config.mjs';

/** What `buildah config` sets for each image built here, and where its archive goes. */
export function clusterImages(dirs = toolsDirs()) {
  return [
    {
      name: PAUSE_IMAGE,
      binary: path.join(dirs.kube, 'pause'),
      target: '/pause',
      user: '65535:65535',
      archive: path.join(dirs.kube, 'pause-image.tar'),
    },
    {
      name: COREDNS_IMAGE,
      binary: path.join(dirs.coredns, 'coredns'),
      target: '/coredns',
      user: '65532:65532',
      archive: path.join(dirs.coredns, 'coredns-image.tar'),
    },
  ];
}

async function buildah(args) {
  return run('buildah', args, { timeoutMs: 5 * 60000 });
}

/** Builds the archive of one image unless it is newer than its binary. */
async function ensureArchive(image) {
  const stat = (f) => (fs.existsSync(f) ? fs.statSync(f).mtimeMs : 0);
  if (stat(image.archive) > stat(image.binary)) return false;
  const { stdout } = await buildah([
    'from',
    '--quiet',
    // a name of its own: another build on the machine may hold buildah's default one
    '--name',
    `herald-cluster-${path.basename(image.target)}-${process.pid}`,
    'scratch',
  ]);
  const container = stdout.trim().split('\n').at(-1);
  try {
    await buildah(['copy', '--chmod', '0755', container, image.binary, image.target]);
    await buildah([
      'config',
      '--entrypoint',
      JSON.stringify([image.target]),
      '--user',
      image.user,
      '--os',
      'linux',
      '--arch',
      'amd64',
      container,
    ]);
    const tmp = `${image.archive}.tmp`;
    fs.rmSync(tmp, { force: true });
    // straight into an archive: nothing is left in buildah's own image store
    await buildah(['commit', '--quiet', container, `oci-archive:${tmp}:${image.name}`]);
    fs.renameSync(tmp, image.archive);
  } finally {
    await run('buildah', ['rm', container], { check: false });
  }
  return true;
}

export async function ensureClusterImageArchives() {
  const built = [];
  for (const image of clusterImages()) if (await ensureArchive(image)) built.push(image.name);
  return built;
}

/** The image names an OCI archive holds (its index's ref.name annotations). */
export async function archiveRefs(archive) {
  const { stdout } = await run('tar', ['-xOf', archive, 'index.json'], { check: false });
  try {
    const index = JSON.parse(stdout);
    return (index.manifests ?? [])
      .map((m) => m.annotations?.['org.opencontainers.image.ref.name'])
      .filter(Boolean);
  } catch {
    return [];
  }
}

/**
 * The full name the kubelet asks containerd for: a name without a registry is Docker Hub's
 * (`herald/auth:0.1.0` is `docker.io/herald/auth:0.1.0`, `busybox` is
 * `docker.io/library/busybox:latest`). An archive may name its image either way.
 */
export function normalizedRef(name) {
  const slash = name.indexOf('/');
  const first = slash === -1 ? '' : name.slice(0, slash);
  const hasRegistry = first === 'localhost' || first.includes('.') || first.includes(':');
  let ref = hasRegistry ? name : `docker.io/${slash === -1 ? 'library/' : ''}${name}`;
  const lastPart = ref.slice(ref.lastIndexOf('/') + 1);
  if (!lastPart.includes(':') && !lastPart.includes('@')) ref += ':latest';
  return ref;
}

export function ctrArgs(socket, ...args) {
  return ['--address', socket, '--namespace', 'k8s.io', ...args];
}

/**
 * Imports an archive; `name` is the image's full name (ctr would otherwise prefix a name it
 * does not recognise as its own). Returns the names imported.
 */
export async function importArchive(socket, archive, names) {
  const refs = names ?? (await archiveRefs(archive));
  const { stdout } = await run(
    'ctr',
    ctrArgs(socket, 'images', 'import', '--all-platforms', archive),
    {
      timeoutMs: 10 * 60000,
    },
  );
  const named = [];
  // ctr prints "unpacking <name> (sha256:…)…done" for each image it named
  for (const m of stdout.matchAll(/unpacking (\S+) \(/g)) named.push(m[1]);
  const imported = [];
  for (const name of named.length > 0 ? named : refs) {
    const full = normalizedRef(name);
    if (full !== name) {
      // the kubelet looks the image up by its full name only
      await run('ctr', ctrArgs(socket, 'images', 'tag', '--force', name, full));
    }
    imported.push(full);
  }
  return imported;
}

export async function listImages(socket) {
  const { stdout } = await run('ctr', ctrArgs(socket, 'images', 'ls', '-q'), { check: false });
  return stdout.split('\n').filter(Boolean);
}
