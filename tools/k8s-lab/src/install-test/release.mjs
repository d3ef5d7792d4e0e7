// The release the install test installs and what it needs around it: its namespace, values and
// secret values, its own databases on the stack's PostgreSQL, and its Services' addresses.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { dataDir, ports, postgresUser, repoRoot } from '@herald/stack/config.mjs';
import { ensureGoTool } from '@herald/stack/go-tools.mjs';
import { ensureRegistry, isLoopbackRegistry, registryHost } from '@herald/stack/registry.mjs';
import { adminToken, serviceToken, signingKeys } from '@herald/stack/secrets.mjs';
import { kubectl, kubectlJson } from './kube.mjs';

const require = createRequire(import.meta.url);
const pg = require('pg');

export const NAMESPACE = process.env.HERALD_K8S_NAMESPACE || 'herald-k8s-test';
export const RELEASE = 'herald';
/** The node's end of the pod bridge: pods reach it, and the node listens on it. */
export const BRIDGE = process.env.HERALD_K8S_BRIDGE_ADDRESS || '10.244.0.1';
const DB_PREFIX = 'herald_k8s_';
/** Each pod's Prometheus port: the chart's `metrics.port`, which the test's values keep. */
const METRICS_PORT = 9464;
const DATABASES = ['auth', 'contacts', 'events', 'billing'];
const VALUES = path.join(repoRoot, 'charts', 'herald', 'ci', 'local-cluster-values.yaml');
const workDir = path.join(dataDir, 'test-k8s');
export const SECRET_VALUES = path.join(workDir, 'secret-values.yaml');

/**
 * The release of this checkout's version that `npm run release` made and pushed: its folder and
 * manifest (the chart's OCI reference and version, each image's digest).
 */
export function localRelease() {
  const { version } = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
  const dir = path.join(dataDir, 'release', version);
  const file = path.join(dir, 'manifest.json');
  if (!fs.existsSync(file)) {
    throw new Error(`no release of ${version} in ${dir}: run \`npm run release\` first`);
  }
  /** @type {{ version: string, chart: { ref: string, version: string, digest: string },
   *   images: Record<string, { ref: string, repository: string, digest: string }> }} */
  const manifest = JSON.parse(fs.readFileSync(file, 'utf8'));
  const registry = manifest.chart.ref.replace(/^oci:\/\//, '').replace(/\/charts\/herald$/, '');
  return { dir, manifest, registry };
}

/**
 * Starts the local registry the release was pushed to (`npm stop` stops it), then runs the
 * release's own verify.sh (its checksums, and cosign's check of every signature) with cosign
 * built from its Go module on PATH; throws with its output when a check fails.
 * @param {ReturnType<typeof localRelease>} release
 */
export async function verifyRelease(release) {
  // The test cluster's containerd reaches the local registry only (its hosts.toml).
  if (release.registry.split('/')[0] !== registryHost) {
    throw new Error(
      `the release was pushed to ${release.registry}; the test installs from the local registry ${registryHost}: run \`npm run release\``,
    );
  }
  await ensureRegistry();
  const cosign = ensureGoTool('cosign');
  const result = spawnSync('sh', [path.join(release.dir, 'verify.sh')], {
    encoding: 'utf8',
    env: { ...process.env, PATH: `${path.dirname(cosign)}:${process.env.PATH}` },
  });
  if (result.status !== 0) throw new Error(`verify.sh failed:\n${result.stdout}${result.stderr}`);
}

/**
 * The images the release's pods run that are not the release's own (`<ref>@<digest>` of its
 * manifest, which containerd reports as the imageID of an image pulled by digest).
 * @param {ReturnType<typeof localRelease>} release
 */
export async function imagesNotReleased(release) {
  const released = new Set(
    Object.values(release.manifest.images).map((i) => `${i.repository}@${i.digest}`),
  );
  const pods = await kubectlJson(['-n', NAMESPACE, 'get', 'pods']);
  return [
    ...new Set(
      pods.items
        .flatMap((/** @type {any} */ p) => p.status.containerStatuses ?? [])
        .map((/** @type {{ imageID: string }} */ c) => c.imageID)
        .filter((/** @type {string} */ id) => !released.has(id)),
    ),
  ];
}

/**
 * The chart as `helm install` and `helm upgrade` name it (from the release's OCI registry, at
 * its version), the namespace and the values: the cluster's, the stack's secrets, and the
 * registry the release was pushed to (its images are pinned by digest in the chart's values).
 * @param {ReturnType<typeof localRelease>} release
 */
export const helmArgs = (release) => [
  release.manifest.chart.ref,
  '--version',
  release.manifest.chart.version,
  ...(isLoopbackRegistry(release.registry) ? ['--plain-http'] : []),
  '-n',
  NAMESPACE,
  '-f',
  VALUES,
  '-f',
  SECRET_VALUES,
  '--set',
  `image.registry=${release.registry}`,
];

/** JSON values for helm, written as YAML is a superset of JSON; 0600: it holds secrets. */
export function writeSecretValues() {
  fs.mkdirSync(workDir, { recursive: true });
  /** @param {string} db */
  const url = (db) => `postgres://${postgresUser}@${BRIDGE}:${ports.postgres}/${DB_PREFIX}${db}`;
  const values = {
    secrets: {
      existingSecret: '',
      adminToken: adminToken(),
      serviceTokens: {
        auth: serviceToken('auth'),
        contacts: serviceToken('contacts'),
        events: serviceToken('events'),
        billing: serviceToken('billing'),
      },
      authSigningKeys: signingKeys(),
      redisUrl: `redis://${BRIDGE}:${ports.redis}`,
      databaseUrls: Object.fromEntries(DATABASES.map((db) => [db, url(db)])),
    },
  };
  fs.writeFileSync(SECRET_VALUES, `${JSON.stringify(values, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(SECRET_VALUES, 0o600);
}

/**
 * @template T
 * @param {(client: { query: (sql: string) => Promise<unknown> }) => Promise<T>} fn
 * @returns {Promise<T>}
 */
async function withPostgres(fn, database = 'postgres') {
  const client = new pg.Client({
    host: '127.0.0.1',
    port: ports.postgres,
    user: postgresUser,
    database,
  });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** The release's own databases, empty, so that its relay is the only one publishing their outbox. */
export async function freshDatabases() {
  await withPostgres(async (c) => {
    for (const db of DATABASES) {
      await c.query(`DROP DATABASE IF EXISTS ${DB_PREFIX}${db} WITH (FORCE)`);
      await c.query(`CREATE DATABASE ${DB_PREFIX}${db}`);
    }
  });
  return DATABASES.map((d) => DB_PREFIX + d).join(', ');
}

export async function dropDatabases() {
  await withPostgres(async (c) => {
    for (const db of DATABASES)
      await c.query(`DROP DATABASE IF EXISTS ${DB_PREFIX}${db} WITH (FORCE)`);
  });
}

/**
 * The release's events relays as their heartbeats in its events database show them: each one's
 * id (its pod's name, then the process) and how many of the outbox's shards it publishes.
 * @returns {Promise<{ relay_id: string, shards: number }[]>}
 */
export async function relayShares() {
  const result = await withPostgres(
    (c) =>
      c.query(
        `select relay_id, cardinality(shards) as shards from outbox_relays
         where outbox = 'events' order by relay_id`,
      ),
    `${DB_PREFIX}events`,
  );
  return /** @type {{ rows: { relay_id: string, shards: number }[] }} */ (result).rows;
}

/**
 * The events outbox's published messages in a Prometheus text exposition, over its topics.
 * @param {string} exposition
 */
export function publishedEvents(exposition) {
  let total = 0;
  for (const line of exposition.split('\n')) {
    if (!line.startsWith('outbox_published_total{') || !line.includes('outbox_name="events"')) {
      continue;
    }
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/**
 * The chart runs two relays: each has a share of the outbox's shards (its heartbeat row) and has
 * published messages (`outbox_published_total` of its pod, read through the API server's proxy).
 */
export async function bothRelaysPublish() {
  const shares = await relayShares();
  if (shares.length !== 2 || shares.some((s) => s.shards === 0)) {
    throw new Error(`the relays' shares: ${JSON.stringify(shares)}`);
  }
  const pods = await kubectlJson([
    'get',
    'pods',
    '-n',
    NAMESPACE,
    '-l',
    'app.kubernetes.io/component=events-relay',
  ]);
  const published = [];
  for (const pod of pods.items) {
    const { stdout } = await kubectl([
      'get',
      '--raw',
      `/api/v1/namespaces/${NAMESPACE}/pods/${pod.metadata.name}:${METRICS_PORT}/proxy/metrics`,
    ]);
    published.push(publishedEvents(stdout));
  }
  if (published.length !== 2 || published.some((n) => n === 0)) {
    throw new Error(`messages published by each relay pod: ${published.join(', ')}`);
  }
  return `shards ${shares.map((s) => s.shards).join(' + ')}, messages ${published.join(' + ')}`;
}

/** The namespace, made anew, enforcing the restricted Pod Security profile. */
export async function recreateNamespace() {
  await kubectl([
    'delete',
    'namespace',
    NAMESPACE,
    '--ignore-not-found',
    '--wait=true',
    '--timeout=180s',
  ]);
  await kubectl(['create', 'namespace', NAMESPACE]);
  await kubectl([
    'label',
    'namespace',
    NAMESPACE,
    'pod-security.kubernetes.io/enforce=restricted',
    'pod-security.kubernetes.io/enforce-version=latest',
  ]);
}

/**
 * The URL of each Service of the release (its `http` port at its ClusterIP), by component.
 * @returns {Promise<Urls>}
 */
export async function serviceUrls() {
  const list = await kubectlJson([
    '-n',
    NAMESPACE,
    'get',
    'services',
    '-l',
    `app.kubernetes.io/instance=${RELEASE}`,
  ]);
  /** @type {Urls} */
  const urls = {};
  for (const svc of list.items) {
    const component = svc.metadata.labels['app.kubernetes.io/component'];
    const port = svc.spec.ports.find((p) => p.name === 'http') ?? svc.spec.ports[0];
    urls[component] = `http://${svc.spec.clusterIP}:${port.port}`;
  }
  return urls;
}

/** @typedef {Record<string, string>} Urls the release's Services by component: auth, contacts, ... */
