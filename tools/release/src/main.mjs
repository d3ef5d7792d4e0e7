// `npm run release`: one version of Herald, built, described, signed and pushed (docs/release.md).
// Into .herald/release/<version>/ it writes the images' SBOMs, the packaged chart with the
// release's registry and image digests pinned in its values, the SDK's and the operator CLI's
// npm tarballs, the npm dependency SBOM, the public key and signatures, release notes from CHANGELOG.md, a manifest of
// every artifact, SHA256SUMS and verify.sh; it pushes the images and the chart to an OCI registry
// and signs them there. Each step prints one line with its time.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { versionProblems } from '@herald/k8s-lab/chart-check/versions.mjs';
import { ensureTools, tool } from '@herald/k8s-lab/images/tools.mjs';
import { LAB_REGISTRY } from '@herald/k8s-lab/images/chart.mjs';
import { IMAGE_BUILDS } from '@herald/k8s-lab/images/build.mjs';
import { commandLine } from '@herald/stack/args.mjs';
import { dataDir, repoRoot } from '@herald/stack/config.mjs';
import { ensureGoTool } from '@herald/stack/go-tools.mjs';
import { ensureRegistry, isLoopbackRegistry, registryHost } from '@herald/stack/registry.mjs';
import { checksums, pinnedValues, releaseNotes } from './artifacts.mjs';

const USAGE = `Usage: npm run release [-- options]

Builds one release of Herald, the version in package.json (the chart's appVersion), into
.herald/release/<version>/, and pushes its images and chart to an OCI registry:
  images        every image of the chart, built with buildah (npm run images -- --no-run),
                tagged <registry>/herald/<process>:<version>, pushed, recorded by digest
  SBOMs         one SPDX document per image (syft) and one of the npm dependencies (npm sbom)
  chart         helm package, with image.registry and every image digest pinned in its values,
                pushed to oci://<registry>/charts
  SDK           @herald/client as an npm tarball (npm pack), ready to publish
  CLI           herald-admin (@herald/cli), the operator CLI, as an npm tarball (npm install -g)
  signatures    the images and the chart in the registry, and the chart's tarball, signed with
                cosign and a key; cosign.pub and verify.sh check them
  notes         the version's section of CHANGELOG.md; manifest.json; SHA256SUMS

Options:
  --registry HOST[:PORT][/PATH]  where to push (default: the local registry on ${registryHost},
                                 started when needed). Credentials: buildah's and helm's own
                                 login files. Plain HTTP only for a registry on loopback.
  --no-build     use the images npm run images built last (their tags must be the version)
  -h, --help     this text

Signing key: COSIGN_KEY (a cosign private key file) and COSIGN_PASSWORD. Without COSIGN_KEY a
key of this checkout's own is made once in .herald/release-keys/: fit for local releases only.`;

const { values: options } = commandLine(USAGE, {
  options: {
    registry: { type: 'string' },
    'no-build': { type: 'boolean' },
  },
});

const started = Date.now();
const since = (/** @type {number} */ t) => `${((Date.now() - t) / 1000).toFixed(1)} s`;
const say = (/** @type {string} */ line) => console.log(line);

/** Runs a step, printing its name, what it returns and its time. @template T */
async function step(/** @type {string} */ name, /** @type {() => Promise<T> | T} */ fn) {
  const t = Date.now();
  const detail = await fn();
  say(`release: ${name}${typeof detail === 'string' && detail ? `: ${detail}` : ''} (${since(t)})`);
  return detail;
}

/**
 * A program's stdout (and stderr with `all`); an error with its output when it fails. With
 * `show`, its output goes to ours as it comes (a long build), and nothing is returned.
 */
function exec(
  /** @type {string} */ cmd,
  /** @type {string[]} */ args,
  env = {},
  { all = false, show = false } = {},
) {
  const result = spawnSync(cmd, args, {
    cwd: repoRoot,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    maxBuffer: 256 * 1024 * 1024,
    stdio: show ? 'inherit' : 'pipe',
  });
  if (result.status !== 0) {
    throw new Error(
      `${path.basename(cmd)} ${args.join(' ')} failed (${result.status ?? result.signal}):\n` +
        `${result.stdout ?? ''}${result.stderr ?? ''}`.trim().slice(-4000),
    );
  }
  return all ? `${result.stdout}${result.stderr}` : result.stdout;
}

const chartDir = path.join(repoRoot, 'charts', 'herald');
const version = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).version;
const { problems, chartVersion } = versionProblems({
  chartDir,
  packageJson: path.join(repoRoot, 'package.json'),
  changelog: path.join(repoRoot, 'CHANGELOG.md'),
  lockFile: path.join(repoRoot, 'charts', 'chart-versions.json'),
});
if (problems.length > 0) {
  console.error(`release: the versions are not ready:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
const notes = releaseNotes(fs.readFileSync(path.join(repoRoot, 'CHANGELOG.md'), 'utf8'), version);

// Built into a folder of its own and renamed at the end: a failed release leaves the last
// complete one in place.
const final = path.join(dataDir, 'release', version);
const out = `${final}.partial`;
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(path.join(out, 'sbom'), { recursive: true });
const registry = (options.registry ?? '').replace(/\/+$/, '') || registryHost;
if (registry.split('/')[0] === registryHost) await ensureRegistry();
const plainHttp = isLoopbackRegistry(registry);
say(`release: Herald ${version}, chart ${chartVersion}, to ${registry} (${final})`);

const [helm, syft, cosign] = await step('tools (helm, syft, cosign from their Go modules)', () => [
  ensureGoTool('helm'),
  ensureGoTool('syft'),
  ensureGoTool('cosign'),
]);
await ensureTools();

/** The signing key: COSIGN_KEY, or this checkout's own (made once) for local releases. */
const key = await step('signing key', () => {
  if (process.env.COSIGN_KEY) {
    if (process.env.COSIGN_PASSWORD === undefined) {
      throw new Error('COSIGN_KEY is set without COSIGN_PASSWORD');
    }
    return {
      file: process.env.COSIGN_KEY,
      password: process.env.COSIGN_PASSWORD,
      pub: process.env.COSIGN_PUBLIC_KEY ?? '',
    };
  }
  const dir = path.join(dataDir, 'release-keys');
  const passwordFile = path.join(dir, 'password');
  if (!fs.existsSync(path.join(dir, 'cosign.key'))) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs.writeFileSync(passwordFile, randomBytes(24).toString('base64url'), { mode: 0o600 });
    const made = spawnSync(cosign, ['generate-key-pair'], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, COSIGN_PASSWORD: fs.readFileSync(passwordFile, 'utf8') },
    });
    if (made.status !== 0) {
      fs.rmSync(dir, { recursive: true, force: true });
      throw new Error(`cosign generate-key-pair failed:\n${made.stdout}${made.stderr}`);
    }
  }
  return {
    file: path.join(dir, 'cosign.key'),
    password: fs.readFileSync(passwordFile, 'utf8'),
    pub: path.join(dir, 'cosign.pub'),
  };
});
if (!key.pub || !fs.existsSync(key.pub)) {
  throw new Error('the public key is needed beside the release: set COSIGN_PUBLIC_KEY');
}
fs.copyFileSync(key.pub, path.join(out, 'cosign.pub'));
const cosignEnv = { COSIGN_PASSWORD: key.password };
// Key-based signatures without Sigstore's public services (the transparency log, and the
// signing config cosign would fetch through TUF): they need the internet.
const offline = ['--tlog-upload=false', '--use-signing-config=false', '--yes'];
const registryFlags = plainHttp ? ['--allow-http-registry'] : [];
/** Signs an image or the chart in the registry, by digest (`<repository>@sha256:…`). */
const signInRegistry = (/** @type {string} */ ref) =>
  exec(cosign, ['sign', '--key', key.file, ...offline, ...registryFlags, ref], cosignEnv);

const names = Object.keys(IMAGE_BUILDS);
/** Where `npm run images` saves each image as an OCI archive. */
const imagesDir = path.join(repoRoot, '.herald', 'images');
if (!options['no-build']) {
  await step('images built (npm run images -- --no-run)', () => {
    exec(
      process.execPath,
      [path.join(repoRoot, 'tools/k8s-lab/src/images/main.mjs'), '--no-run'],
      {},
      { show: true },
    );
    return names.join(', ');
  });
}

/** @type {Record<string, { ref: string, repository: string, digest: string, sbom: string }>} */
const images = {};
for (const name of names) {
  await step(`image ${name}`, async () => {
    const local = `${LAB_REGISTRY}/herald/${name}:${version}`;
    const ref = `${registry}/herald/${name}:${version}`;
    const digestFile = path.join(out, `.digest-${name}`);
    await tool('buildah', [
      'push',
      `--tls-verify=${!plainHttp}`,
      '--digestfile',
      digestFile,
      local,
      `docker://${ref}`,
    ]);
    const digest = fs.readFileSync(digestFile, 'utf8').trim();
    fs.rmSync(digestFile);
    const sbom = `sbom/${name}.spdx.json`;
    exec(
      syft,
      [
        'scan',
        `oci-archive:${path.join(imagesDir, `${name}.tar`)}`,
        '-q',
        '-o',
        `spdx-json=${path.join(out, sbom)}`,
      ],
      {
        SYFT_CHECK_FOR_APP_UPDATE: 'false',
      },
    );
    const repository = `${registry}/herald/${name}`;
    signInRegistry(`${repository}@${digest}`);
    images[name] = { ref, repository, digest, sbom };
    return `${ref}@${digest}, SBOM and signature`;
  });
}

const chartFile = `herald-${chartVersion}.tgz`;
const chart = await step('chart packaged with pinned digests, pushed and signed', () => {
  const work = fs.mkdtempSync(path.join(dataDir, 'release-chart-'));
  try {
    const copy = path.join(work, 'herald');
    fs.cpSync(chartDir, copy, { recursive: true });
    const valuesFile = path.join(copy, 'values.yaml');
    fs.writeFileSync(
      valuesFile,
      pinnedValues(
        fs.readFileSync(valuesFile, 'utf8'),
        registry,
        Object.fromEntries(Object.entries(images).map(([n, i]) => [n, i.digest])),
      ),
    );
    exec(helm, ['package', copy, '--destination', out]);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  // helm prints the pushed reference and its digest on stderr.
  const pushed = exec(
    helm,
    [
      'push',
      path.join(out, chartFile),
      `oci://${registry}/charts`,
      ...(plainHttp ? ['--plain-http'] : []),
    ],
    {},
    { all: true },
  );
  const digest = /Digest:\s*(sha256:[0-9a-f]{64})/.exec(pushed)?.[1];
  if (!digest) throw new Error(`helm push printed no digest:\n${pushed}`);
  signInRegistry(`${registry}/charts/herald@${digest}`);
  exec(
    cosign,
    [
      'sign-blob',
      '--key',
      key.file,
      ...offline,
      '--bundle',
      path.join(out, `${chartFile}.sigstore.json`),
      path.join(out, chartFile),
    ],
    cosignEnv,
  );
  return { ref: `oci://${registry}/charts/herald`, version: chartVersion, digest };
});

const [sdkFile, cliFile] = await step(
  'SDK and operator CLI tarballs (npm pack), the npm dependency SBOM',
  () => {
    const packed = JSON.parse(
      exec('npm', [
        'pack',
        ...['-w', '@herald/client', '-w', '@herald/cli'],
        ...['--json', '--pack-destination', out],
      ]),
    );
    fs.writeFileSync(
      path.join(out, 'sbom', 'npm.spdx.json'),
      exec('npm', ['sbom', '--sbom-format', 'spdx', '--omit', 'dev']),
    );
    const file = (name) => packed.find((p) => p.name === name).filename;
    return [file('@herald/client'), file('@herald/cli')];
  },
);

await step('notes, manifest, verify.sh, SHA256SUMS', () => {
  fs.writeFileSync(path.join(out, 'RELEASE-NOTES.md'), notes ?? `# Herald ${version}\n`);
  const verifyHttp = plainHttp ? ' --allow-http-registry' : '';
  const verify = [
    '#!/bin/sh',
    `# Checks Herald ${version}'s files and signatures: sha256sum, and cosign (Go module`,
    '# github.com/sigstore/cosign/v3; `node tools/stack/src/go-tools.mjs cosign` builds it).',
    'set -eu',
    'cd "$(dirname "$0")"',
    'sha256sum --check --quiet SHA256SUMS',
    ...Object.values(images).map(
      (i) =>
        `cosign verify --key cosign.pub --insecure-ignore-tlog${verifyHttp} ${i.repository}@${i.digest} > /dev/null`,
    ),
    `cosign verify --key cosign.pub --insecure-ignore-tlog${verifyHttp} ${registry}/charts/herald@${chart.digest} > /dev/null`,
    `cosign verify-blob --key cosign.pub --insecure-ignore-tlog --bundle ${chartFile}.sigstore.json ${chartFile}`,
    'echo "verified: checksums, the images, the chart"',
    '',
  ].join('\n');
  fs.writeFileSync(path.join(out, 'verify.sh'), verify, { mode: 0o755 });
  const manifest = {
    version,
    chart: { ...chart, file: chartFile },
    images,
    sdk: sdkFile,
    cli: cliFile,
    sboms: ['sbom/npm.spdx.json', ...Object.values(images).map((i) => i.sbom)],
    publicKey: 'cosign.pub',
  };
  fs.writeFileSync(path.join(out, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const files = fs
    .readdirSync(out, { recursive: true, withFileTypes: true })
    .filter((f) => f.isFile())
    .map((f) => path.relative(out, path.join(f.parentPath, f.name)))
    .filter((name) => name !== 'SHA256SUMS');
  fs.writeFileSync(
    path.join(out, 'SHA256SUMS'),
    checksums(files.map((name) => ({ name, bytes: fs.readFileSync(path.join(out, name)) }))),
  );
  return `${files.length + 1} files`;
});

await step('verify.sh', () => {
  exec('sh', [path.join(out, 'verify.sh')], {
    PATH: `${path.dirname(cosign)}:${process.env.PATH}`,
  });
  return 'passed';
});

fs.rmSync(final, { recursive: true, force: true });
fs.renameSync(out, final);
say('');
for (const f of fs.readdirSync(final, { recursive: true, withFileTypes: true })) {
  if (!f.isFile()) continue;
  const file = path.join(f.parentPath, f.name);
  say(
    `  ${path.relative(final, file).padEnd(40)} ${String(fs.statSync(file).size).padStart(10)} bytes`,
  );
}
for (const [name, i] of Object.entries(images)) say(`  image ${name.padEnd(13)} ${i.digest}`);
say(`  chart ${chartVersion.padEnd(13)} ${chart.digest}`);
say(`\nrelease: Herald ${version} in ${path.relative(repoRoot, final)} (${since(started)})`);
