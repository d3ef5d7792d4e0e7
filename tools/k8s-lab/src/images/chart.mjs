// What the Helm chart runs, read from `helm template` itself: each Deployment's and migration
// Job's image, command, environment (ConfigMap, Secret and plain values resolved), security
// contexts, /tmp size, memory limit, probes and termination grace period. Rendered with the local
// stack's secrets and addresses as values, so the same processes can run against the stack.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { yamlDocuments } from '../chart-check/helm-json.mjs';
import { KUBERNETES_VERSION } from '../chart-check/k8s-schemas.mjs';
import { run } from '@herald/stack/processes.mjs';

/**
 * The registry name `npm run images` builds the images under: a local name only, never pushed
 * as such. `npm run release` pushes them to a registry.
 */
export const LAB_REGISTRY = 'localhost';

/**
 * The chart's values for a run against the local stack: its own Secret (no existingSecret) with
 * the stack's tokens, signing keys, database URLs, Redis Cluster and Kafka, listening on
 * loopback only (the containers share the machine's network).
 */
export function stackValues({ secrets, databaseUrls, kafkaBrokers, redisClusterNodes }) {
  return {
    image: { registry: LAB_REGISTRY },
    config: { listenHost: '127.0.0.1' },
    // Only the processes are run from the rendering; no ingress, so no TLS for it.
    ingress: { enabled: false },
    kafka: { brokers: kafkaBrokers.split(',') },
    redis: { mode: 'cluster' },
    secrets: {
      existingSecret: '',
      adminToken: secrets.adminToken,
      serviceTokens: secrets.serviceTokens,
      authSigningKeys: secrets.authSigningKeys,
      redisClusterNodes: redisClusterNodes.split(','),
      databaseUrls,
    },
  };
}

/** `helm template` of the chart with these values, as a list of objects. */
export async function renderChart({ helm, chartDir, values, release = 'herald' }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-images-values-'));
  const file = path.join(dir, 'values.json');
  try {
    // JSON is YAML; the file holds the stack's secrets, so only we may read it
    fs.writeFileSync(file, JSON.stringify(values), { mode: 0o600 });
    const { stdout } = await run(helm, [
      'template',
      release,
      chartDir,
      '--kube-version',
      KUBERNETES_VERSION,
      '-f',
      file,
    ]);
    return yamlDocuments(helm, stdout);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The image's own name: herald/events-relay:0.1.0 → events-relay. */
export function imageName(image) {
  return image
    .replace(/@.*$/, '')
    .replace(/:[^/:]*$/, '')
    .split('/')
    .at(-1);
}

function secretData(secret) {
  const data = { ...(secret.stringData ?? {}) };
  for (const [k, v] of Object.entries(secret.data ?? {})) {
    data[k] = Buffer.from(v, 'base64').toString('utf8');
  }
  return data;
}

/** A container's environment as Kubernetes gives it: envFrom first, then env (which wins). */
export function containerEnv(container, { configMaps, secrets }) {
  /** @type {Record<string, string>} */
  const env = {};
  const need = (table, kind, name) => {
    if (!table[name]) throw new Error(`${kind} ${name} is not in the rendered chart`);
    return table[name];
  };
  for (const from of container.envFrom ?? []) {
    if (from.configMapRef)
      Object.assign(env, need(configMaps, 'ConfigMap', from.configMapRef.name));
    if (from.secretRef) Object.assign(env, need(secrets, 'Secret', from.secretRef.name));
  }
  for (const variable of container.env ?? []) {
    if ('value' in variable) env[variable.name] = String(variable.value);
    else if (variable.valueFrom?.secretKeyRef) {
      const { name, key } = variable.valueFrom.secretKeyRef;
      const value = need(secrets, 'Secret', name)[key];
      if (value === undefined) throw new Error(`Secret ${name} has no key ${key}`);
      env[variable.name] = value;
    } else if (variable.valueFrom?.configMapKeyRef) {
      const { name, key } = variable.valueFrom.configMapKeyRef;
      env[variable.name] = need(configMaps, 'ConfigMap', name)[key];
    } else {
      throw new Error(
        `variable ${variable.name}: only values, Secret and ConfigMap keys are known`,
      );
    }
  }
  return env;
}

/**
 * The pods of the rendered chart: one entry per Deployment (`kind: 'service'`) and per migration
 * Job (`kind: 'migration'`), named by their component label.
 */
export function podsOf(documents) {
  const configMaps = {};
  const secrets = {};
  for (const d of documents) {
    if (d?.kind === 'ConfigMap') configMaps[d.metadata.name] = d.data ?? {};
    if (d?.kind === 'Secret') secrets[d.metadata.name] = secretData(d);
  }
  const pods = [];
  for (const d of documents) {
    if (d?.kind !== 'Deployment' && d?.kind !== 'Job') continue;
    const spec = d.spec.template.spec;
    if (spec.containers.length !== 1) throw new Error(`${d.metadata.name}: one container expected`);
    const [container] = spec.containers;
    const tmp = spec.volumes?.find((v) =>
      container.volumeMounts?.some((m) => m.name === v.name && m.mountPath === '/tmp'),
    );
    const httpPort = container.ports?.find((p) => p.name === 'http')?.containerPort;
    const kind = d.kind === 'Deployment' ? 'service' : 'migration';
    pods.push({
      kind,
      name: d.spec.template.metadata.labels['app.kubernetes.io/component'],
      resource: d.metadata.name,
      image: container.image,
      imageName: imageName(container.image),
      command: container.command ?? null,
      args: container.args ?? null,
      env: containerEnv(container, { configMaps, secrets }),
      podSecurityContext: spec.securityContext ?? {},
      securityContext: container.securityContext ?? {},
      tmpSize: tmp?.emptyDir?.sizeLimit ?? null,
      memoryLimit: container.resources?.limits?.memory ?? null,
      terminationGracePeriodSeconds: spec.terminationGracePeriodSeconds ?? 30,
      preStopSleepSeconds: container.lifecycle?.preStop?.sleep?.seconds ?? 0,
      activeDeadlineSeconds: d.spec.activeDeadlineSeconds ?? null,
      probes: Object.fromEntries(
        ['startupProbe', 'livenessProbe', 'readinessProbe']
          .filter((p) => container[p])
          .map((p) => [
            p,
            {
              path: container[p].httpGet?.path,
              port: container[p].httpGet?.port === 'http' ? httpPort : container[p].httpGet?.port,
              periodSeconds: container[p].periodSeconds ?? 10,
              failureThreshold: container[p].failureThreshold ?? 3,
            },
          ]),
      ),
      ports: Object.fromEntries((container.ports ?? []).map((p) => [p.name, p.containerPort])),
    });
  }
  return pods;
}

/** Variables that hold in-cluster addresses of Herald's own services. */
export function isServiceAddress(name) {
  return (
    name.startsWith('SERVICE_URL_') || ['AUTH_JWKS_URL', 'CONTACT_DATA_SERVICES'].includes(name)
  );
}

/**
 * The environment of a pod run on this machine: the chart's, with the ports moved to free ones
 * (the containers share the machine's network, so each needs its own) and the in-cluster
 * addresses of the other services replaced by the stack's. Returns {env, replaced}.
 * @param {Record<string, string>} chartEnv
 * @param {{ stackVariables: Record<string, string>, port?: number, metricsPort?: number }} local
 */
export function localEnv(chartEnv, { stackVariables, port, metricsPort }) {
  const env = { ...chartEnv };
  const replaced = [];
  if ('PORT' in env && port) env.PORT = String(port);
  if ('METRICS_PORT' in env && metricsPort) env.METRICS_PORT = String(metricsPort);
  for (const name of Object.keys(env)) {
    if (!isServiceAddress(name)) continue;
    if (stackVariables[name] === undefined) {
      throw new Error(`the chart sets ${name}, which the local stack has no value for`);
    }
    env[name] = stackVariables[name];
    replaced.push(name);
  }
  return { env, replaced };
}
