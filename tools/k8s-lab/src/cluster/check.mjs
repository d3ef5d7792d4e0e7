// `check`: applies a 2-replica Deployment and its Service in a namespace enforcing the restricted
// Pod Security level and proves, one TAP line each, that the pods run, that a pod without a
// restricted security context is refused, and that the Service's name resolves through CoreDNS,
// from the node and from a pod. Exit code 1 when a check fails.
import fs from 'node:fs';
import path from 'node:path';
import { StackError } from '@herald/stack/output.mjs';
import { waitFor } from '@herald/stack/processes.mjs';
import { applyObjects, dnsAnswers, kubectl, nodeReady, paths, seconds } from './components.mjs';
import { CLUSTER_DOMAIN, DNS_SERVICE_IP, NODE_NAME } from './config.mjs';
import { listImages } from './images.mjs';
import { CHECK_APP, CHECK_NAMESPACE, checkObjects, lookupPod } from './manifests.mjs';

/**
 * The TAP lines of the checks, numbered as they pass or fail.
 * @typedef {{ pass: (what: string) => void, fail: (what: string) => void }} Report
 */

/** Applies the check workload and proves pods, Pod Security, Services and DNS work. */
export async function check() {
  /** @type {boolean[]} */
  const results = [];
  /** @type {Report} */
  const report = {
    pass: (what) => {
      results.push(true);
      process.stdout.write(`ok ${results.length} - ${what}\n`);
    },
    fail: (what) => {
      results.push(false);
      process.stdout.write(`not ok ${results.length} - ${what}\n`);
    },
  };
  if (!(await nodeReady())) {
    throw new StackError('check', `node ${NODE_NAME} is not Ready; run npm run cluster -- up`);
  }
  report.pass(`node ${NODE_NAME} is Ready`);
  // from nothing each time: pods of an earlier run would prove nothing about this one
  await kubectl(['delete', 'namespace', CHECK_NAMESPACE, '--ignore-not-found', '--wait=true']);
  await checkPods(report);
  await checkRefusal(report);
  const clusterIp = await checkServiceName(report);
  await lookupFromPod({ clusterIp, ...report });
  const failed = results.filter((r) => !r).length;
  process.stdout.write(`${results.length - failed} passed, ${failed} failed\n`);
  return failed === 0 ? 0 : 1;
}

/**
 * The check workload applied, and its two pods Running and ready.
 * @param {Report} report
 */
async function checkPods({ pass, fail }) {
  const started = Date.now();
  await applyObjects('check', checkObjects());
  const rollout = await kubectl(
    ['-n', CHECK_NAMESPACE, 'rollout', 'status', `deployment/${CHECK_APP}`, '--timeout=180s'],
    { check: false },
  );
  const { stdout: podsJson } = await kubectl([
    '-n',
    CHECK_NAMESPACE,
    'get',
    'pods',
    '-l',
    `app=${CHECK_APP}`,
    '-o',
    'json',
  ]);
  const pods = JSON.parse(podsJson).items;
  const runningPods = pods.filter(
    (p) => p.status.phase === 'Running' && p.status.containerStatuses?.every((c) => c.ready),
  );
  const podLines = pods.map(
    (p) => `${p.metadata.name} ${p.status.phase} ${p.status.podIP ?? '-'} on ${p.spec.nodeName}`,
  );
  const what = `2 pods of deployment/${CHECK_APP} Running in namespace ${CHECK_NAMESPACE} (enforce=restricted) (${seconds(started)}): ${podLines.join('; ')}`;
  if (rollout.code === 0 && runningPods.length === 2) pass(what);
  else fail(`${what}\n${rollout.stdout}${rollout.stderr}`);
}

/**
 * A pod as most images' examples write it (root allowed, privilege escalation, capabilities)
 * is refused in the namespace.
 * @param {Report} report
 */
async function checkRefusal({ pass, fail }) {
  const unconfined = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'unconfined-probe', namespace: CHECK_NAMESPACE },
    spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
  };
  const probeFile = path.join(paths.config, 'check-unconfined.json');
  fs.writeFileSync(probeFile, JSON.stringify(unconfined));
  const refused = await kubectl(['apply', '--dry-run=server', '-f', probeFile], { check: false });
  const refusal = refused.stderr.trim().split('\n')[0];
  if (refused.code !== 0 && /violates PodSecurity "restricted/.test(refused.stderr)) {
    pass(`a pod without a restricted security context is refused there: ${refusal}`);
  } else
    fail(
      `a pod without a restricted security context was not refused: ${refused.stdout}${refused.stderr}`,
    );
}

/**
 * The Service's name resolves through CoreDNS, from the node, to its ClusterIP; returns that.
 * @param {Report} report
 */
async function checkServiceName({ pass, fail }) {
  const { stdout: clusterIp } = await kubectl([
    '-n',
    CHECK_NAMESPACE,
    'get',
    'service',
    CHECK_APP,
    '-o',
    'jsonpath={.spec.clusterIP}',
  ]);
  const svcName = `${CHECK_APP}.${CHECK_NAMESPACE}.svc.${CLUSTER_DOMAIN}`;
  try {
    const answer = await waitFor(() => dnsAnswers(svcName, clusterIp.trim()), {
      timeoutMs: 30000,
      intervalMs: 500,
      what: `${svcName} to resolve`,
    });
    pass(
      `${svcName} resolves through CoreDNS (${DNS_SERVICE_IP}) to ${answer.addresses.join(', ')}, the Service's ClusterIP`,
    );
  } catch (err) {
    fail(`${svcName} does not resolve to ${clusterIp}: ${err.message}`);
  }
  return clusterIp.trim();
}

/**
 * The same name looked up from inside a pod, when one of Herald's images (Node.js) is there.
 * @param {{ clusterIp: string } & Report} options
 */
async function lookupFromPod({ clusterIp, pass, fail }) {
  const image = (await listImages(paths.containerdSocket)).find((n) =>
    /\/herald\/[^/]+[:@]/.test(n),
  );
  if (!image) {
    process.stdout.write(
      'ok - lookup from a pod # SKIP no Herald image in containerd yet (npm run test:k8s pulls them)\n',
    );
    return;
  }
  await applyObjects('check-lookup', [lookupPod(image)]);
  const phase = await waitFor(
    async () => {
      const { stdout } = await kubectl(
        ['-n', CHECK_NAMESPACE, 'get', 'pod', 'lookup', '-o', 'jsonpath={.status.phase}'],
        { check: false },
      );
      return ['Succeeded', 'Failed'].includes(stdout) ? stdout : null;
    },
    { timeoutMs: 90000, intervalMs: 1000, what: 'the lookup pod to finish' },
  ).catch((err) => err.message);
  const { stdout: logs, stderr } = await kubectl(['-n', CHECK_NAMESPACE, 'logs', 'lookup'], {
    check: false,
  });
  const said = (logs || stderr).trim().split('\n').join('; ');
  if (phase === 'Succeeded' && logs.includes(`${CHECK_APP} -> ${clusterIp}`)) {
    pass(`from a pod (${image}, restricted): ${said}`);
  } else fail(`the lookup pod (${image}) ended ${phase}: ${said}`);
}
