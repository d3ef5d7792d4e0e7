#!/usr/bin/env node
// `npm run test:k8s`: the Helm chart installed on the single-node cluster of `npm run cluster`,
// against the local stack's PostgreSQL, Redis and Kafka (docs/kubernetes-install-test.md).
// Brings the stack and the cluster up when they are not, forwards the stack's backends to the
// pod bridge, installs the chart into a namespace enforcing the restricted Pod Security profile,
// goes through the public routes at the Services' ClusterIPs, checks that the relay publishes,
// runs `helm test`, upgrades under a request loop, rolls back and uninstalls.
// Prints one line per step with its time; exits 1 when a step fails.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ensureGatewayApiCrds } from '../gateway-api.mjs';
import { dataDir, ports, postgresUser, repoRoot } from '@herald/stack/config.mjs';
import { up as stackUp } from '@herald/stack/index.mjs';
import { adminToken, serviceToken, signingKeys } from '@herald/stack/secrets.mjs';
import { startForwarder } from './forward.mjs';
import { helm, kubectl, kubectlJson } from './kube.mjs';
import { startRouter } from './router.mjs';

const require = createRequire(import.meta.url);
const { Kafka, logLevel } = require('kafkajs');
const pg = require('pg');

const NAMESPACE = process.env.HERALD_K8S_NAMESPACE || 'herald-k8s-test';
const RELEASE = 'herald';
/** The node's end of the pod bridge: pods reach it, and the node listens on it. */
const BRIDGE = process.env.HERALD_K8S_BRIDGE_ADDRESS || '10.244.0.1';
const DB_PREFIX = 'herald_k8s_';
const DATABASES = ['auth', 'contacts', 'events', 'billing'];
const CHART = path.join(repoRoot, 'charts', 'herald');
const VALUES = path.join(CHART, 'ci', 'local-cluster-values.yaml');
const workDir = path.join(dataDir, 'test-k8s');
const SECRET_VALUES = path.join(workDir, 'secret-values.yaml');
const EVENTS_TOPIC = 'herald.events.recorded';

const results = [];
const t0 = Date.now();
const secs = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** When each step started, to say in which one a Warning event happened. */
const stepStarts = [];

/** The step that was running at `time` (ms since the epoch). */
function stepAt(time) {
  return stepStarts.findLast((s) => s.start <= time)?.name ?? 'before the first step';
}

async function step(name, fn, { optional = false } = {}) {
  const start = Date.now();
  stepStarts.push({ name, start });
  process.stdout.write(`… ${name}\n`);
  try {
    const detail = await fn();
    const line = `ok     ${name} (${secs(Date.now() - start)})${detail ? `: ${detail}` : ''}`;
    console.log(line);
    results.push({ name, ok: true });
    return true;
  } catch (err) {
    console.log(`not ok ${name} (${secs(Date.now() - start)}): ${err.message}`);
    results.push({ name, ok: false });
    if (!optional) throw Object.assign(err, { reported: true });
    return false;
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function spawnInherit(cmd, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}`)),
    );
  });
}

/** JSON values for helm, written as YAML is a superset of JSON; 0600: it holds secrets. */
function writeSecretValues() {
  fs.mkdirSync(workDir, { recursive: true });
  const url = (db) => `postgres://${postgresUser}@${BRIDGE}:${ports.postgres}/${DB_PREFIX}${db}`;
  const values = {
    secrets: {
      existingSecret: '',
      adminToken: adminToken(),
      serviceTokens: {
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

async function withPostgres(fn) {
  const client = new pg.Client({
    host: '127.0.0.1',
    port: ports.postgres,
    user: postgresUser,
    database: 'postgres',
  });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** The release's own databases, empty, so that its relay is the only one publishing their outbox. */
async function freshDatabases() {
  await withPostgres(async (c) => {
    for (const db of DATABASES) {
      await c.query(`DROP DATABASE IF EXISTS ${DB_PREFIX}${db} WITH (FORCE)`);
      await c.query(`CREATE DATABASE ${DB_PREFIX}${db}`);
    }
  });
  return DATABASES.map((d) => DB_PREFIX + d).join(', ');
}

async function dropDatabases() {
  await withPostgres(async (c) => {
    for (const db of DATABASES)
      await c.query(`DROP DATABASE IF EXISTS ${DB_PREFIX}${db} WITH (FORCE)`);
  });
}

async function recreateNamespace() {
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

const helmArgs = () => ['-n', NAMESPACE, '-f', VALUES, '-f', SECRET_VALUES];

async function serviceUrls() {
  const list = await kubectlJson([
    '-n',
    NAMESPACE,
    'get',
    'services',
    '-l',
    `app.kubernetes.io/instance=${RELEASE}`,
  ]);
  const urls = {};
  for (const svc of list.items) {
    const component = svc.metadata.labels['app.kubernetes.io/component'];
    const port = svc.spec.ports.find((p) => p.name === 'http') ?? svc.spec.ports[0];
    urls[component] = `http://${svc.spec.clusterIP}:${port.port}`;
  }
  return urls;
}

async function call(url, method, { body, authorization, expected = [200] } = {}) {
  const headers = {};
  if (authorization) headers.authorization = authorization;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  if (!expected.includes(res.status)) {
    throw new Error(`${method} ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  }
  return text ? JSON.parse(text) : null;
}

/** A consumer of herald.events.recorded on the stack's broker, from the host; resolves once it has joined. */
async function watchEvents() {
  const kafka = new Kafka({
    clientId: 'herald-test-k8s',
    brokers: [`127.0.0.1:${ports.kafka}`],
    logLevel: logLevel.NOTHING,
  });
  const consumer = kafka.consumer({ groupId: `herald-test-k8s-${randomUUID()}` });
  const received = [];
  await consumer.connect();
  await consumer.subscribe({ topic: EVENTS_TOPIC, fromBeginning: false });
  const joined = new Promise((resolve) => consumer.on(consumer.events.GROUP_JOIN, resolve));
  await consumer.run({
    eachMessage: async ({ message }) => {
      received.push({ key: message.key?.toString(), value: message.value?.toString() });
    },
  });
  await Promise.race([
    joined,
    sleep(30_000).then(() => Promise.reject(new Error('no group join in 30 s'))),
  ]);
  return {
    received,
    async waitFor(predicate, ms) {
      const until = Date.now() + ms;
      while (Date.now() < until) {
        const found = received.find(predicate);
        if (found) return found;
        await sleep(250);
      }
      return null;
    },
    stop: () => consumer.disconnect(),
  };
}

/** Public-path fixture: a Tenant, a secret key exchanged for a token, a Contact. */
async function fixture(urls) {
  const admin = `Bearer ${adminToken()}`;
  const tenant = await call(`${urls.auth}/admin/v1/tenants`, 'POST', {
    body: { name: `k8s-test-${randomUUID()}` },
    authorization: admin,
    expected: [201],
  });
  const key = await call(`${urls.auth}/admin/v1/tenants/${tenant.id}/api-keys`, 'POST', {
    body: {
      kind: 'secret',
      scopes: [
        'events:write',
        'contacts:write',
        'contacts:read',
        'contacts:export',
        'contacts:erase',
      ],
    },
    authorization: admin,
    expected: [201],
  });
  const basic = `Basic ${Buffer.from(`${key.clientId}:${key.secret}`).toString('base64')}`;
  const token = await call(`${urls.auth}/v1/token`, 'POST', { authorization: basic });
  const bearer = `Bearer ${token.accessToken}`;
  const externalId = `k8s-${randomUUID()}`;
  const contact = await call(`${urls.contacts}/v1/contacts/${externalId}`, 'PUT', {
    body: { email: `${externalId.slice(0, 16)}@example.com` },
    authorization: bearer,
    expected: [200, 201],
  });
  return { tenantId: tenant.id, bearer, contact };
}

const eventBody = (contact, eventName, identity = { contactId: contact.id }) => ({
  ...identity,
  eventName,
  occurredAt: new Date().toISOString(),
  dedupKey: `k8s-${randomUUID()}`,
});

/**
 * Requests in a loop until stopped, one at a time per route: an Event recorded, the Contact
 * read, the JWKS read. Counts answers by status; a refused or reset connection counts as failed.
 */
function requestLoop(urls, fx) {
  const counts = { total: 0, ok: 0, failed: 0, byStatus: {}, errors: {} };
  let running = true;
  const routes = [
    [
      'POST /v1/events/by-contact-id',
      () =>
        fetch(`${urls.events}/v1/events/by-contact-id`, {
          method: 'POST',
          headers: { authorization: fx.bearer, 'content-type': 'application/json' },
          body: JSON.stringify(eventBody(fx.contact, 'Rollout Probe')),
          signal: AbortSignal.timeout(10_000),
        }),
    ],
    [
      'GET /v1/contacts/:externalId',
      () =>
        fetch(`${urls.contacts}/v1/contacts/${fx.contact.externalId ?? ''}`, {
          headers: { authorization: fx.bearer },
          signal: AbortSignal.timeout(10_000),
        }),
    ],
    [
      'GET /.well-known/jwks.json',
      () => fetch(`${urls.auth}/.well-known/jwks.json`, { signal: AbortSignal.timeout(10_000) }),
    ],
  ];
  const loops = routes.map(async ([route, send]) => {
    while (running) {
      counts.total += 1;
      try {
        const res = await send();
        await res.arrayBuffer();
        counts.byStatus[res.status] = (counts.byStatus[res.status] ?? 0) + 1;
        if (res.status < 500 && res.status !== 429 && res.status < 400) counts.ok += 1;
        else {
          counts.failed += 1;
          const why = `${route}: ${res.status}`;
          counts.errors[why] = (counts.errors[why] ?? 0) + 1;
        }
      } catch (err) {
        counts.failed += 1;
        const why = `${route}: ${err.cause?.code ?? err.name}`;
        counts.errors[why] = (counts.errors[why] ?? 0) + 1;
      }
      await sleep(50);
    }
  });
  return {
    counts,
    async stop() {
      running = false;
      await Promise.all(loops);
      return counts;
    },
  };
}

/**
 * The k6 smoke scenario (loadtest/run.mjs) against `baseUrl`, for `seconds`: a Tenant, a key and
 * an organization made through the operator routes, then every public route. Resolves with its
 * closing line; rejects when k6 failed a threshold (any failed request, check or 429 does).
 */
function k6Smoke(baseUrl, seconds) {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, HERALD_INGRESS_URL: baseUrl, DURATION: `${seconds}s` };
    delete env.HERALD_TEST_RESULTS_DIR; // not one of npm test's results
    const child = spawn(process.execPath, ['loadtest/run.mjs', 'smoke'], {
      cwd: repoRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const verdict = output.split('\n').find((l) => l.startsWith('loadtest smoke')) ?? '';
      if (code === 0) resolve(verdict);
      else {
        for (const line of output.trim().split('\n').slice(-40)) console.log(`  k6 | ${line}`);
        reject(new Error(verdict || `k6 smoke exited ${code}`));
      }
    });
  });
}

/** A Contact's export (JSON Lines), its erasure, and the reads that show it gone. */
async function exportAndErase(urls, fx) {
  const externalId = `k8s-erase-${randomUUID()}`;
  const contact = await call(`${urls.contacts}/v1/contacts/${externalId}`, 'PUT', {
    body: { email: `${externalId.slice(0, 20)}@example.com`, name: 'To Be Erased' },
    authorization: fx.bearer,
    expected: [201],
  });
  await call(`${urls.events}/v1/events/by-external-id`, 'POST', {
    body: eventBody({}, 'Before Erasure', { contactExternalId: externalId }),
    authorization: fx.bearer,
    expected: [202],
  });
  const res = await fetch(`${urls.contacts}/v1/contacts/${externalId}/export`, {
    headers: { authorization: fx.bearer },
    signal: AbortSignal.timeout(30_000),
  });
  const lines = (await res.text()).trim().split('\n').filter(Boolean);
  if (
    res.status !== 200 ||
    !lines.every((l) => JSON.parse(l)) ||
    !lines.some((l) => l.includes(contact.id)) ||
    !lines.some((l) => l.includes('"Before Erasure"'))
  ) {
    throw new Error(
      `export answered ${res.status} with ${lines.length} line(s), not the Contact and its Event`,
    );
  }
  await call(`${urls.contacts}/v1/contacts/${externalId}/erase`, 'POST', {
    authorization: fx.bearer,
    expected: [204],
  });
  await call(`${urls.contacts}/v1/contacts/${externalId}`, 'GET', {
    authorization: fx.bearer,
    expected: [404],
  });
  return `export ${lines.length} line(s) (the Contact, its Event), erase 204, read after 404`;
}

const describeCounts = (c) =>
  `${c.total} requests, ${c.ok} ok, ${c.failed} failed; by status ${JSON.stringify(c.byStatus)}` +
  (Object.keys(c.errors).length ? `; errors ${JSON.stringify(c.errors)}` : '');

async function main() {
  const forwarders = [];
  let router = null;
  let watch = null;
  let installed = false;
  let failed = false;
  try {
    await step('local stack up', async () => {
      const { results: r } = await stackUp({ quiet: true });
      return Object.entries(r)
        .filter(([, v]) => v !== 'running')
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
    });
    await step('cluster up (node tools/k8s-lab/src/cluster/main.mjs up)', () =>
      spawnInherit(process.execPath, ['tools/k8s-lab/src/cluster/main.mjs', 'up']),
    );
    await step(`forwarders on ${BRIDGE} to the stack's PostgreSQL, Redis and Kafka`, async () => {
      const target = (port) => ({ host: '127.0.0.1', port });
      const listen = (port) => ({ host: BRIDGE, port });
      forwarders.push(
        await startForwarder({ listen: listen(ports.postgres), target: target(ports.postgres) }),
      );
      forwarders.push(
        await startForwarder({ listen: listen(ports.redis), target: target(ports.redis) }),
      );
      forwarders.push(
        await startForwarder({
          listen: listen(ports.kafka),
          target: target(ports.kafka),
          kafka: true,
          warn: (m) => console.log(`  kafka forwarder: ${m}`),
        }),
      );
      return `${ports.postgres}, ${ports.redis}, ${ports.kafka} (Kafka's advertised 127.0.0.1 rewritten to ${BRIDGE})`;
    });
    await step('release databases created afresh', freshDatabases);
    await step("values with the stack's secrets written", async () => {
      writeSecretValues();
      return path.relative(repoRoot, SECRET_VALUES);
    });
    await step(`namespace ${NAMESPACE} (enforce=restricted)`, async () => {
      await helm(['uninstall', RELEASE, '-n', NAMESPACE, '--wait'], { allowFail: true });
      await recreateNamespace();
    });

    await step('Gateway API CRDs applied (standard channel, from its Go module)', async () => {
      const { version, files } = ensureGatewayApiCrds();
      await kubectl([
        'apply',
        '--server-side',
        '--force-conflicts',
        ...files.flatMap((f) => ['-f', f]),
      ]);
      return `sigs.k8s.io/gateway-api ${version}, ${files.length} files`;
    });

    await step('helm install (migration hooks, every Deployment available)', async () => {
      await helm(['install', RELEASE, CHART, ...helmArgs(), '--wait', '--timeout', '10m']);
      installed = true;
      const deps = await kubectlJson(['-n', NAMESPACE, 'get', 'deployments']);
      const unavailable = deps.items.filter(
        (d) => (d.status.availableReplicas ?? 0) < d.spec.replicas,
      );
      if (unavailable.length)
        throw new Error(`not available: ${unavailable.map((d) => d.metadata.name).join(', ')}`);
      return deps.items
        .map((d) => `${d.metadata.name} ${d.status.availableReplicas}/${d.spec.replicas}`)
        .join(', ');
    });

    await step(
      'HTTPRoute and NetworkPolicies of the release accepted by the API server',
      async () => {
        const route = await kubectlJson(['-n', NAMESPACE, 'get', 'httproute', RELEASE]);
        const policies = await kubectlJson(['-n', NAMESPACE, 'get', 'networkpolicies']);
        const rules = route.spec.rules.map((r) => r.backendRefs[0].name).join(', ');
        console.log(
          '  no Gateway controller runs here: the HTTPRoute is validated and stored, not served;\n' +
            '  the bridge CNI does not enforce NetworkPolicies: they are stored, their rules untested',
        );
        return `HTTPRoute rules to ${rules}; ${policies.items.length} NetworkPolicies`;
      },
    );

    const urls = await serviceUrls();
    console.log(`  ClusterIPs: ${JSON.stringify(urls)}`);
    router = await startRouter(urls);
    console.log(
      `  the chart's Ingress paths routed to them from ${router.url} (no Ingress controller)`,
    );
    watch = await watchEvents();
    let fx;
    await step('token exchange, Contact upsert through the ClusterIPs', async () => {
      fx = await fixture(urls);
      return `tenant ${fx.tenantId}, contact ${fx.contact.id}`;
    });
    await step(
      `an Event recorded through events reaches ${EVENTS_TOPIC} (the release's relay)`,
      async () => {
        const body = eventBody(fx.contact, 'K8s Install Test');
        await call(`${urls.events}/v1/events/by-contact-id`, 'POST', {
          body,
          authorization: fx.bearer,
          expected: [202],
        });
        const found = await watch.waitFor(
          (m) => m.key?.startsWith(`${fx.tenantId}:`) && m.value?.includes(body.dedupKey),
          60_000,
        );
        if (!found) throw new Error(`no message keyed ${fx.tenantId}:… within 60 s`);
        return `key ${found.key}`;
      },
    );

    await step('k6 smoke through the Services (every public route, thresholds)', () =>
      k6Smoke(router.url, 12),
    );
    await step('Contact export and erasure through the Services', () => exportAndErase(urls, fx));

    await step('helm test (record-event hook pod)', async () => {
      const r = await helm(['test', RELEASE, '-n', NAMESPACE, '--timeout', '5m'], {
        allowFail: true,
      });
      const out = `${r.stdout}\n${r.stderr}`.trim();
      for (const line of out.split('\n')) console.log(`  | ${line}`);
      if (r.code !== 0) throw new Error(`helm test exited ${r.code}`);
    });

    // The request loop, and k6's smoke scenario for K6_ROLLOUT_SECONDS (longer than a rollout
    // takes here), run through the rollout; any failed request of either fails the step.
    const K6_ROLLOUT_SECONDS = 120;
    const rolled = async (label, args) => {
      const loop = requestLoop(urls, fx);
      const k6 = k6Smoke(router.url, K6_ROLLOUT_SECONDS).then(
        (verdict) => ({ verdict }),
        (err) => ({ error: err.message }),
      );
      await sleep(2_000);
      try {
        await helm(args);
      } finally {
        await sleep(5_000); // the old pods' endpoints removal and shutdown settle
        await loop.stop();
      }
      const c = loop.counts;
      console.log(`  ${label}: ${describeCounts(c)}`);
      const smoke = await k6;
      console.log(`  ${label}, k6: ${smoke.verdict ?? smoke.error}`);
      if (c.failed > 0)
        throw new Error(
          `${c.failed} of ${c.total} requests failed during the rollout: ${describeCounts(c)}`,
        );
      if (smoke.error) throw new Error(`k6 during the rollout: ${smoke.error}`);
      return `${describeCounts(c)}; k6: ${smoke.verdict}`;
    };
    await step(
      'helm upgrade (a pod annotation) under a request loop: 0 failed',
      () =>
        rolled('upgrade', [
          'upgrade',
          RELEASE,
          CHART,
          ...helmArgs(),
          '--set-string',
          `defaults.podAnnotations.herald\\.test/rollout=${Date.now()}`,
          '--wait',
          '--timeout',
          '10m',
        ]),
      { optional: true },
    );
    await step(
      'helm rollback to revision 1 under a request loop: 0 failed',
      () =>
        rolled('rollback', [
          'rollback',
          RELEASE,
          '1',
          '-n',
          NAMESPACE,
          '--wait',
          '--timeout',
          '10m',
        ]),
      { optional: true },
    );

    // A probe that fails while its process starts (nothing listens yet), times out on a loaded
    // node, or meets a stopping pod's closed port is a Warning too: listed and counted, but only
    // any other warning, or a container restart, fails the step.
    await step(
      'no Warning event of the release but probes of starting or stopping pods, no restart',
      async () => {
        const events = await kubectlJson([
          '-n',
          NAMESPACE,
          'get',
          'events',
          '--field-selector',
          'type=Warning',
        ]);
        const transitional = (e) =>
          e.reason === 'Unhealthy' && /^(Startup|Readiness) probe failed/.test(e.message ?? '');
        let probes = 0;
        const others = [];
        for (const e of events.items) {
          const at = Date.parse(e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp);
          const line = `${e.involvedObject.kind}/${e.involvedObject.name} ${e.reason} x${e.count ?? 1} (last during "${stepAt(at)}"): ${e.message?.trim()}`;
          console.log(`  warning ${line}`);
          if (transitional(e)) probes += e.count ?? 1;
          else others.push(line);
        }
        const pods = await kubectlJson(['-n', NAMESPACE, 'get', 'pods']);
        const restarts = pods.items.flatMap((p) =>
          (p.status.containerStatuses ?? [])
            .filter((c) => c.restartCount > 0)
            .map((c) => `${p.metadata.name} ${c.restartCount}`),
        );
        const summary = `${probes} failed startup or readiness probe(s) of starting or stopping pods; ${others.length} other warning(s); ${restarts.length} restarted container(s)`;
        if (others.length || restarts.length) {
          throw new Error(`${summary}: ${[...others, ...restarts].join('; ')}`);
        }
        return summary;
      },
      { optional: true },
    );

    await watch.stop();
    watch = null;
    await step('helm uninstall leaves nothing of the release', async () => {
      await helm(['uninstall', RELEASE, '-n', NAMESPACE, '--wait', '--timeout', '5m']);
      installed = false;
      // Pods of deleted Deployments take their preStop sleep and shutdown to go: wait for them.
      let names = [];
      for (const until = Date.now() + 120_000; Date.now() < until; await sleep(2_000)) {
        const left = await kubectl([
          '-n',
          NAMESPACE,
          'get',
          'all,configmaps,secrets,serviceaccounts,networkpolicies,poddisruptionbudgets,jobs,ingresses,horizontalpodautoscalers,httproutes',
          '-l',
          `app.kubernetes.io/instance=${RELEASE}`,
          '-o',
          'name',
        ]);
        names = left.stdout.trim().split('\n').filter(Boolean);
        if (!names.length) break;
      }
      if (names.length) throw new Error(`left behind: ${names.join(', ')}`);
    });
  } catch (err) {
    failed = true;
    if (!err.reported) console.log(`not ok ${err.message}`);
  } finally {
    if (watch) await watch.stop().catch(() => {});
    if (router) await router.close();
    if (installed) {
      const r = await helm(['uninstall', RELEASE, '-n', NAMESPACE, '--wait', '--timeout', '5m'], {
        allowFail: true,
      });
      console.log(`  cleanup: helm uninstall exited ${r.code}`);
    }
    await kubectl(['delete', 'namespace', NAMESPACE, '--ignore-not-found', '--wait=false'], {
      allowFail: true,
    });
    for (const f of forwarders) await f.close();
    await dropDatabases().catch((e) =>
      console.log(`  cleanup: databases not dropped: ${e.message}`),
    );
  }
  const passed = results.filter((r) => r.ok).length;
  const notOk = results.length - passed;
  console.log(`\n${passed} passed, ${notOk} failed in ${secs(Date.now() - t0)}`);
  process.exit(failed || notOk ? 1 : 0);
}

main();
