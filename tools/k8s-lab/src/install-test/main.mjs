#!/usr/bin/env node
// `npm run test:k8s`: the Helm chart installed on the single-node cluster of `npm run cluster`,
// against the local stack's PostgreSQL, Redis and Kafka (docs/kubernetes-install-test.md).
// Brings the stack and the cluster up when they are not, forwards the stack's backends to the
// pod bridge, installs the chart into a namespace enforcing the restricted Pod Security profile,
// goes through the public routes at the Services' ClusterIPs, checks that the relay publishes,
// runs `helm test`, upgrades under a request loop, rolls back and uninstalls.
// Prints one line per step with its time; exits 1 when a step fails.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { startRouter } from '@herald/cli/router';
import { commandLine } from '@herald/stack/args.mjs';
import { ports, repoRoot, stackServices } from '@herald/stack/config.mjs';
import { up as stackUp } from '@herald/stack/index.mjs';
import { sleep } from '@herald/stack/processes.mjs';
import { ensureGatewayApiCrds } from '../gateway-api.mjs';
import { call, EVENTS_TOPIC, eventBody, exportAndErase, fixture, watchEvents } from './clients.mjs';
import { forwardStackBackends } from './forward.mjs';
import { helm, kubectl, kubectlJson } from './kube.mjs';
import { k6Smoke, rolloutUnderLoad } from './load.mjs';
import { operatorRoutesThroughForward } from './operator-cli.mjs';
import {
  BRIDGE,
  dropDatabases,
  freshDatabases,
  helmArgs,
  bothRelaysPublish,
  imagesNotReleased,
  localRelease,
  NAMESPACE,
  recreateNamespace,
  RELEASE,
  SECRET_VALUES,
  serviceUrls,
  verifyRelease,
  writeSecretValues,
} from './release.mjs';
import { printSummary, step, stepAt } from './steps.mjs';

const USAGE = `Usage: npm run test:k8s

Installs the Helm chart (charts/herald) on the single-node cluster of \`npm run cluster\`,
against the local stack's PostgreSQL, Redis and Kafka, brings both up when they are not, and
tests the release: its public routes, its relay, \`helm test\`, an upgrade and a rollback under
load, and its uninstall. See docs/kubernetes-install-test.md.

Environment:
  HERALD_K8S_NAMESPACE        the release's namespace (herald-k8s-test)
  HERALD_K8S_BRIDGE_ADDRESS   the node's end of the pod bridge (10.244.0.1)`;

/**
 * What the test started and must stop, whatever happens.
 * @typedef {object} Started
 * @property {{ close: () => Promise<void> }[]} forwarders
 * @property {Awaited<ReturnType<typeof startRouter>> | null} router
 * @property {Awaited<ReturnType<typeof watchEvents>> | null} watch
 * @property {boolean} installed whether the release is installed
 * @property {ReturnType<typeof localRelease> | null} release  the release installed, once verified
 */

async function main() {
  /** @type {Started} */
  const started = { forwarders: [], router: null, watch: null, installed: false, release: null };
  let failed = false;
  try {
    await prepare(started);
    await install(started);
    const urls = await serviceUrls();
    console.log(`  ClusterIPs: ${JSON.stringify(urls)}`);
    // the chart's public and operator Ingress routes: both are generated from the stack's registry
    const routes = stackServices.flatMap((s) => s.routes.map((r) => ({ ...r, service: s.name })));
    const router = await startRouter(routes, (service) => urls[service]);
    started.router = router;
    console.log(
      `  the chart's Ingress paths routed to them from ${router.url} (no Ingress controller)`,
    );
    started.watch = await watchEvents();
    const fx = await exercise(urls, router.url, started.watch);
    await step('herald-admin forward: every operator route through one local address', () =>
      operatorRoutesThroughForward(),
    );
    await rollouts({ urls, fx, routerUrl: router.url }, started.release);
    await warnings();
    await started.watch.stop();
    started.watch = null;
    await uninstall(started);
  } catch (err) {
    failed = true;
    if (!err.reported) console.log(`not ok ${err.message}`);
  } finally {
    await cleanUp(started);
  }
  const notOk = printSummary();
  process.exit(failed || notOk ? 1 : 0);
}

/**
 * The release verified, the stack and the cluster up, the forwarders, the release's databases,
 * values and namespace, and the Gateway API's CRDs.
 * @param {Started} started
 */
async function prepare(started) {
  await step('local stack up', async () => {
    const { results: r } = await stackUp({ quiet: true });
    return Object.entries(r)
      .filter(([, v]) => v !== 'running')
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  });
  await step(
    'the release in the local registry, its signatures and checksums verified',
    async () => {
      const release = localRelease();
      await verifyRelease(release);
      started.release = release;
      return `${release.manifest.chart.ref}:${release.manifest.chart.version} and ${Object.keys(release.manifest.images).length} images (verify.sh of npm run release)`;
    },
  );
  await step('cluster up (node tools/k8s-lab/src/cluster/main.mjs up)', () =>
    spawnInherit(process.execPath, ['tools/k8s-lab/src/cluster/main.mjs', 'up']),
  );
  await step(`forwarders on ${BRIDGE} to the stack's PostgreSQL, Redis and Kafka`, async () => {
    await forwardStackBackends(BRIDGE, started.forwarders);
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
}

/**
 * A command whose output goes to ours; rejects when it fails.
 * @param {string} cmd
 * @param {string[]} args
 * @returns {Promise<void>}
 */
function spawnInherit(cmd, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}`)),
    );
  });
}

/**
 * `helm install`, every Deployment available, and the objects the API server only stores here.
 * @param {Started} started
 */
async function install(started) {
  await step('helm install (migration hooks, every Deployment available)', async () => {
    await helm(['install', RELEASE, ...helmArgs(started.release), '--wait', '--timeout', '10m']);
    started.installed = true;
    const deps = await kubectlJson(['-n', NAMESPACE, 'get', 'deployments']);
    const unavailable = deps.items.filter(
      (d) => (d.status.availableReplicas ?? 0) < d.spec.replicas,
    );
    if (unavailable.length)
      throw new Error(`not available: ${unavailable.map((d) => d.metadata.name).join(', ')}`);
    // Every container runs an image pulled from the release's registry, by its released digest.
    const foreign = await imagesNotReleased(started.release);
    if (foreign.length) throw new Error(`images not of the release: ${foreign.join(', ')}`);
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
}

/**
 * The release's routes, relay and helm test; the fixture they made.
 * @param {import('./release.mjs').Urls} urls
 * @param {string} routerUrl
 * @param {Awaited<ReturnType<typeof watchEvents>>} watch
 */
async function exercise(urls, routerUrl, watch) {
  /** @type {import('./clients.mjs').Fixture} */
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
    k6Smoke(routerUrl, 12),
  );
  await step(
    'both events-relay replicas publish (a share of the shards each, messages from each)',
    () => bothRelaysPublish(),
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
  return fx;
}

/**
 * An upgrade and a rollback, each under the request loop and k6's smoke scenario.
 * @param {Parameters<typeof rolloutUnderLoad>[2]} target
 * @param {Started['release']} release
 */
async function rollouts(target, release) {
  await step(
    'helm upgrade (a pod annotation) under a request loop: 0 failed',
    () =>
      rolloutUnderLoad(
        'upgrade',
        [
          'upgrade',
          RELEASE,
          ...helmArgs(release),
          '--set-string',
          `defaults.podAnnotations.herald\\.test/rollout=${Date.now()}`,
          '--wait',
          '--timeout',
          '10m',
        ],
        target,
      ),
    { optional: true },
  );
  await step(
    'helm rollback to revision 1 under a request loop: 0 failed',
    () =>
      rolloutUnderLoad(
        'rollback',
        ['rollback', RELEASE, '1', '-n', NAMESPACE, '--wait', '--timeout', '10m'],
        target,
      ),
    { optional: true },
  );
}

// A probe that fails while its process starts (nothing listens yet), times out on a loaded
// node, or meets a stopping pod's closed port is a Warning too: listed and counted, but only
// any other warning, or a container restart, fails the step.
async function warnings() {
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
}

/**
 * `helm uninstall`, then nothing of the release left in the namespace.
 * @param {Started} started
 */
async function uninstall(started) {
  await step('helm uninstall leaves nothing of the release', async () => {
    await helm(['uninstall', RELEASE, '-n', NAMESPACE, '--wait', '--timeout', '5m']);
    started.installed = false;
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
}

/**
 * Stops what the test started and removes what it made, whatever failed.
 * @param {Started} started
 */
async function cleanUp({ forwarders, router, watch, installed }) {
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
  await dropDatabases().catch((e) => console.log(`  cleanup: databases not dropped: ${e.message}`));
}

commandLine(USAGE);
main();
