// `npm run images`: builds every image the Helm chart uses from the services' Dockerfiles with
// buildah, saves each as an OCI archive, and runs each once with runc as the chart runs it
// (security contexts, environment, migration command) against the local stack. docs/images.md.
import fs from 'node:fs';
import path from 'node:path';
import { ensureGoTool } from '@herald/stack/go-tools.mjs';
import { UsageError, commandLine } from '@herald/stack/args.mjs';
import {
  databaseUrl,
  findService,
  kafkaBrokers,
  redisClusterNodes,
  repoRoot,
} from '@herald/stack/config.mjs';
import { down, up } from '@herald/stack/index.mjs';
import { adminToken, serviceToken, signingKeys } from '@herald/stack/secrets.mjs';
import { stackVariables } from '@herald/stack/service-runner.mjs';
import { BASE_IMAGE, ensureBase } from './base.mjs';
import { IMAGE_BUILDS, buildImage, inspectImage, saveArchive, trustMounts } from './build.mjs';
import { localEnv, podsOf, renderChart, stackValues } from './chart.mjs';
import { freePort, mountImage, runPod } from './pods.mjs';
import { ensureTools } from './tools.mjs';

const NAMES = Object.keys(IMAGE_BUILDS);
const USAGE = `Usage: npm run images [-- options]

Builds every image the Helm chart (charts/herald) uses from the services' Dockerfiles with
buildah (${NAMES.join(', ')}),
prints each one's size and layer count, saves each as an OCI archive in
.herald/images/<name>.tar, then runs each once with runc as the chart runs it (its security
contexts, command and environment; the migration command once per database) against the local
stack, which it starts when needed and stops after. The stack's variables apply
(HERALD_DATA_DIR, HERALD_*_PORT: docs/local-stack.md).

The Dockerfiles' base, ${BASE_IMAGE} (pinned by digest), cannot be
pulled here: a stand-in is built locally from Debian packages and Node from the npm registry and
serves the pinned name in the builds; CI elsewhere uses the upstream image (docs/images.md).

Options:
  --only NAME     this image only (repeatable)
  --no-run        build and save only: no runc runs, no stack
  --no-save       no OCI archives
  --no-cache      build every layer anew (buildah --layers=false)
  --rebuild-base  rebuild the stand-in base even when its recipe is unchanged
  --keep-stack    leave running the stack components this command started`;

const { values: options } = commandLine(USAGE, {
  options: {
    only: { type: 'string', multiple: true },
    'no-run': { type: 'boolean' },
    'no-save': { type: 'boolean' },
    'no-cache': { type: 'boolean' },
    'rebuild-base': { type: 'boolean' },
    'keep-stack': { type: 'boolean' },
  },
  check: ({ values }) => {
    for (const name of values.only ?? []) {
      if (!NAMES.includes(name)) {
        throw new UsageError(`unknown image ${name}; the chart's are: ${NAMES.join(', ')}`);
      }
    }
  },
});

const outDir = path.join(repoRoot, '.herald', 'images');
const logDir = path.join(outDir, 'logs');
const cacheDir = path.join(outDir, 'cache');
const workDir = path.join(outDir, 'run');
const started = Date.now();
const since = (t) => `${((Date.now() - t) / 1000).toFixed(1)} s`;
const mb = (bytes) => `${(bytes / 1e6).toFixed(0)} MB`;
const say = (line) => console.log(line);

function table(head, rows) {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  return [head, ...rows]
    .map((cols) => `  ${cols.map((c, i) => String(c).padEnd(widths[i])).join('  ')}`.trimEnd())
    .join('\n');
}

fs.mkdirSync(logDir, { recursive: true });
let t = Date.now();
await ensureTools();
say(`tools: buildah, runc, mmdebstrap (${since(t)})`);

// The chart, rendered with the local stack's secrets and addresses: which images it uses, and
// how it runs each.
t = Date.now();
const helm = ensureGoTool('helm');
const chartValues = stackValues({
  secrets: {
    adminToken: adminToken(),
    serviceTokens: Object.fromEntries(
      ['auth', 'contacts', 'events', 'billing'].map((name) => [name, serviceToken(name)]),
    ),
    authSigningKeys: signingKeys(),
  },
  databaseUrls: Object.fromEntries(
    ['auth', 'contacts', 'events', 'billing'].map((name) => [
      name,
      databaseUrl(findService(name).database),
    ]),
  ),
  kafkaBrokers,
  redisClusterNodes,
});
const pods = podsOf(
  await renderChart({
    helm,
    chartDir: path.join(repoRoot, 'charts', 'herald'),
    values: chartValues,
  }),
);
const chartImages = [...new Set(pods.map((p) => p.imageName))];
const unknown = chartImages.filter((name) => !IMAGE_BUILDS[name]);
if (unknown.length) {
  throw new Error(`the chart uses images with no known Dockerfile: ${unknown.join(', ')}`);
}
const selected = chartImages.filter((name) => !options.only || options.only.includes(name));
const tagOf = Object.fromEntries(pods.map((p) => [p.imageName, p.image]));
say(`chart: ${pods.length} pods, images ${chartImages.join(', ')} (${since(t)})`);

t = Date.now();
const base = await ensureBase({
  cacheDir,
  logFile: path.join(logDir, 'base.log'),
  force: options['rebuild-base'],
  say,
});
say(
  `base: ${BASE_IMAGE} ${base.built ? 'built' : 'up to date'}, recipe ${base.recipe} (${since(t)}): ` +
    'the stand-in base built locally from Debian packages; CI elsewhere uses the upstream image unchanged',
);

const images = {};
const mounts = trustMounts(path.join(cacheDir, 'trust'));
for (const name of selected) {
  const tag = tagOf[name];
  const logFile = path.join(logDir, `build-${name}.log`);
  fs.writeFileSync(logFile, '');
  say(
    `build: ${tag} (${IMAGE_BUILDS[name].dockerfile}${IMAGE_BUILDS[name].target ? `, target ${IMAGE_BUILDS[name].target}` : ''}); log ${path.relative(repoRoot, logFile)}`,
  );
  const seconds = await buildImage({
    repoRoot,
    name,
    tag,
    layers: !options['no-cache'],
    mounts,
    logFile,
  });
  const info = await inspectImage(tag);
  images[name] = { tag, seconds, ...info };
  say(`build: ${tag} ${mb(info.size)}, ${info.layers} layers (${seconds.toFixed(1)} s)`);
  if (!options['no-save']) {
    const t1 = Date.now();
    const archive = await saveArchive({ dir: outDir, name, tag, id: info.id, logFile });
    images[name].archive = archive;
    say(
      `save: ${path.relative(repoRoot, archive.file)} ${mb(archive.bytes)}` +
        (archive.written ? ` (${since(t1)})` : ' (unchanged)'),
    );
  }
}

say(
  `\n${table(
    ['IMAGE', 'SIZE', 'LAYERS', 'BUILD', 'ARCHIVE'],
    Object.values(images).map((i) => [
      i.tag,
      mb(i.size),
      i.layers,
      `${i.seconds.toFixed(1)} s`,
      i.archive ? `${path.relative(repoRoot, i.archive.file)} (${mb(i.archive.bytes)})` : '-',
    ]),
  )}\n`,
);

const rows = [];
if (!options['no-run']) {
  t = Date.now();
  const { started: startedComponents } = await up({ build: false, quiet: true });
  say(
    `stack: up (${since(t)}${startedComponents.length ? `; started ${startedComponents.join(', ')}` : ''})`,
  );
  const runc = (await ensureTools()).runc;
  const mounted = {};
  try {
    // the migration Jobs first (Helm runs them before the release's pods), then the services
    const ordered = [
      ...pods.filter((p) => p.kind === 'migration'),
      ...pods.filter((p) => p.kind === 'service'),
    ].filter((p) => selected.includes(p.imageName));
    for (const pod of ordered) {
      mounted[pod.imageName] ??= await mountImage(images[pod.imageName].tag);
      const process = pod.kind === 'service' ? pod.name : pod.name.replace(/-migrate$/, '');
      const stack = stackVariables(process);
      // the chart and the stack must agree on who may call a service
      if (
        pod.env.SERVICE_CALLERS !== undefined &&
        pod.env.SERVICE_CALLERS !== stack.SERVICE_CALLERS
      ) {
        say(`warning: ${pod.name}: the chart's SERVICE_CALLERS differs from the stack's`);
      }
      const { env, replaced } = localEnv(pod.env, {
        stackVariables: stack,
        port: pod.kind === 'service' ? await freePort() : undefined,
        metricsPort: pod.kind === 'service' ? await freePort() : undefined,
      });
      say(
        `run: ${pod.name} (${pod.command.join(' ')}) as ${pod.podSecurityContext.runAsUser ?? 'the image user'}, ` +
          `read-only root, ${Object.keys(env).length} variables` +
          (pod.kind === 'service' ? `, PORT ${env.PORT}, METRICS_PORT ${env.METRICS_PORT}` : '') +
          (replaced.length ? `; stack addresses for ${replaced.join(', ')}` : ''),
      );
      const row = await runPod({
        runc,
        pod,
        env,
        image: { rootfs: mounted[pod.imageName].rootfs, config: images[pod.imageName].config },
        workDir,
        logDir,
      });
      rows.push(row);
      const what =
        pod.kind === 'migration'
          ? `exited 0 in ${row.seconds?.toFixed(1)} s`
          : `ready in ${row.readySeconds?.toFixed(1)} s, /healthz ${row.healthz}, /metrics ${row.metrics}, stopped in ${row.stopSeconds?.toFixed(1)} s after SIGTERM (exit ${row.exitCode})`;
      say(
        row.ok
          ? `run: ${pod.name} ok: ${what}`
          : `run: ${pod.name} FAILED: ${row.problem}\n${row.logTail ?? ''}`,
      );
    }
  } finally {
    for (const m of Object.values(mounted)) await m.release();
    if (startedComponents.length && !options['keep-stack']) {
      await down({ only: startedComponents, quiet: true });
      say(`stack: stopped ${startedComponents.join(', ')}`);
    }
  }
}

const failed = rows.filter((r) => !r.ok);
say(
  `\nimages: ${Object.keys(images).length} built, ${rows.length - failed.length} runs ok, ` +
    `${failed.length} failed (${since(started)})`,
);
process.exit(failed.length ? 1 : 0);
