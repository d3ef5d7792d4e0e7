// Building the chart's images from the project's Dockerfiles with buildah, their size and layer
// count, and their OCI archives for a cluster to import.
import fs from 'node:fs';
import path from 'node:path';
import { BASE_IMAGE } from './base.mjs';
import { standInContexts } from './dockerfile.mjs';
import { tool } from './tools.mjs';

/**
 * How each image the chart names (`image` in charts/herald/templates/_processes.tpl) is built:
 * the Dockerfile, from the repository root, and its stage (none: the last one).
 */
export const IMAGE_BUILDS = Object.freeze({
  auth: { dockerfile: 'services/auth/Dockerfile' },
  contacts: { dockerfile: 'services/contacts/Dockerfile' },
  events: { dockerfile: 'services/events/Dockerfile' },
  'events-relay': { dockerfile: 'services/events/Dockerfile', target: 'relay' },
  billing: { dockerfile: 'services/billing/Dockerfile' },
});

/**
 * Bind mounts for the build's RUN steps (never part of a layer) that let npm inside the build
 * trust what the machine trusts: where the machine adds a CA (NODE_EXTRA_CA_CERTS, e.g. a
 * proxy's), npm in the image gets it through its global npmrc (`cafile`).
 */
export function trustMounts(workDir, env = process.env) {
  const ca = env.NODE_EXTRA_CA_CERTS;
  if (!ca || !fs.existsSync(ca)) return [];
  fs.mkdirSync(workDir, { recursive: true });
  const npmrc = path.join(workDir, 'npmrc');
  fs.writeFileSync(npmrc, 'cafile=/run/herald-build-ca.pem\n');
  return [
    '--volume',
    `${fs.realpathSync(ca)}:/run/herald-build-ca.pem:ro`,
    '--volume',
    `${npmrc}:/usr/local/etc/npmrc:ro`,
  ];
}

/**
 * buildah's arguments for one image. `contexts`: the `--build-context` arguments that serve the
 * Dockerfile's digest-pinned base from the stand-in (dockerfile.mjs, standInContexts).
 */
export function budArgs({ repoRoot, name, tag, layers = true, mounts = [], contexts = [] }) {
  const build = IMAGE_BUILDS[name];
  if (!build) throw new Error(`no Dockerfile is known for the chart's image ${name}`);
  return [
    'bud',
    '--isolation',
    'chroot',
    // the upstream base cannot be pulled here: the stand-in in local storage is used
    '--pull=never',
    `--layers=${layers}`,
    ...mounts,
    ...contexts,
    '-f',
    path.join(repoRoot, build.dockerfile),
    ...(build.target ? ['--target', build.target] : []),
    '-t',
    tag,
    repoRoot,
  ];
}

export async function buildImage({ repoRoot, name, tag, layers, mounts, logFile }) {
  const t0 = Date.now();
  const dockerfile = fs.readFileSync(path.join(repoRoot, IMAGE_BUILDS[name].dockerfile), 'utf8');
  const contexts = standInContexts(dockerfile, { base: BASE_IMAGE, standIn: BASE_IMAGE });
  await tool('buildah', budArgs({ repoRoot, name, tag, layers, mounts, contexts }), {
    appendTo: logFile,
    timeoutMs: 40 * 60000,
  });
  return (Date.now() - t0) / 1000;
}

/** buildah's sizes as bytes: "378 MB", "1.2 GB" (decimal units), or a number. */
export function sizeBytes(text) {
  const m = /^([\d.]+)\s*(B|kB|KB|MB|GB|TB)?$/.exec(String(text).trim());
  if (!m) throw new Error(`not a size: ${JSON.stringify(text)}`);
  return Math.round(
    Number(m[1]) * { B: 1, kB: 1e3, KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12 }[m[2] ?? 'B'],
  );
}

/** {id, size (bytes, uncompressed), layers, config} of an image in local storage. */
export async function inspectImage(tag) {
  const { stdout } = await tool('buildah', ['inspect', '--type', 'image', tag]);
  const info = JSON.parse(stdout);
  const { stdout: listed } = await tool('buildah', ['images', '--json', tag]);
  const [entry] = JSON.parse(listed);
  return {
    id: info.FromImageID,
    size: sizeBytes(entry?.size ?? '0'),
    layers: info.OCIv1.rootfs.diff_ids.length,
    config: info.OCIv1.config,
  };
}

/**
 * Writes the image as an OCI archive (`<dir>/<name>.tar`, with its name and tag in the index)
 * unless the archive there already holds this image. Returns {file, bytes, written}.
 */
export async function saveArchive({ dir, name, tag, id, logFile }) {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.tar`);
  const idFile = `${file}.image-id`;
  const written = !(
    fs.existsSync(file) &&
    fs.existsSync(idFile) &&
    fs.readFileSync(idFile, 'utf8').trim() === id
  );
  if (written) {
    fs.rmSync(file, { force: true });
    await tool('buildah', ['push', '--quiet', tag, `oci-archive:${file}:${tag}`], {
      appendTo: logFile,
    });
    fs.writeFileSync(idFile, `${id}\n`);
  }
  return { file, bytes: fs.statSync(file).size, written };
}
