// Paths, ports and URLs of the local stack. Node built-ins only: this runs before `npm install`.
// Every port can be moved with an environment variable (see docs/local-stack.md); the values are
// read once, when this module is first imported.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { services as registry } from './services.mjs';

export const repoRoot = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
);

/** Everything the stack writes (data, logs, pids, secrets, caches); HERALD_DATA_DIR moves it
 *  (a relative value is taken from the repository root). */
export const dataDir = path.resolve(repoRoot, process.env.HERALD_DATA_DIR || '.herald');
export const logDir = path.join(dataDir, 'logs');
export const runDir = path.join(dataDir, 'run');
export const infraDir = path.join(repoRoot, 'infra');

/** Loopback only. */
export const host = '127.0.0.1';

/** A port from `envVar` when set (checked: 1..65535), else `fallback`. */
export function portFromEnv(envVar, fallback) {
  const raw = process.env[envVar];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 65535) {
    throw new Error(`${envVar}=${JSON.stringify(raw)} is not a TCP port (1..65535)`);
  }
  return n;
}

/** Environment variable that moves the port of one registry service, e.g. HERALD_AUTH_PORT. */
export function servicePortEnvVar(name) {
  return `HERALD_${name.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_PORT`;
}

/** Environment variable that moves a registry service's metrics port, e.g. HERALD_AUTH_METRICS_PORT. */
export function metricsPortEnvVar(name) {
  return `HERALD_${name.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_METRICS_PORT`;
}

/** The infrastructure ports and the variables that override them. */
export const portEnvVars = {
  ingress: 'HERALD_PORT',
  postgres: 'HERALD_PG_PORT',
  redis: 'HERALD_REDIS_PORT',
  redisCluster: 'HERALD_REDIS_CLUSTER_PORT',
  kafka: 'HERALD_KAFKA_PORT',
  kafkaController: 'HERALD_KAFKA_CONTROLLER_PORT',
  prometheus: 'HERALD_PROMETHEUS_PORT',
  traces: 'HERALD_TRACES_PORT',
  toxiproxy: 'HERALD_TOXIPROXY_PORT',
  kafkaLinked: 'HERALD_KAFKA_LINKED_PORT',
  nginxStatus: 'HERALD_NGINX_STATUS_PORT',
  postgresExporter: 'HERALD_POSTGRES_EXPORTER_PORT',
  redisExporter: 'HERALD_REDIS_EXPORTER_PORT',
  nginxExporter: 'HERALD_NGINX_EXPORTER_PORT',
  kafkaExporter: 'HERALD_KAFKA_EXPORTER_PORT',
  registry: 'HERALD_REGISTRY_PORT',
};

export const ports = Object.freeze({
  ingress: portFromEnv(portEnvVars.ingress, 8080),
  postgres: portFromEnv(portEnvVars.postgres, 55432),
  redis: portFromEnv(portEnvVars.redis, 56379),
  /** The first of the three masters of the local Redis Cluster (56380, 56381, 56382). */
  redisCluster: portFromEnv(portEnvVars.redisCluster, 56380),
  kafka: portFromEnv(portEnvVars.kafka, 59092),
  kafkaController: portFromEnv(portEnvVars.kafkaController, 59093),
  prometheus: portFromEnv(portEnvVars.prometheus, 19090),
  /** The trace receiver (OTLP/HTTP), tools/stack/src/traces.mjs. */
  traces: portFromEnv(portEnvVars.traces, 14318),
  /**
   * The fault proxy's API (tools/stack/src/toxiproxy.mjs), run by the fault suite only; its links
   * listen on the 200 ports above it, below Linux's ephemeral range (32768 up), where an outgoing
   * connection could hold one of them.
   */
  toxiproxy: portFromEnv(portEnvVars.toxiproxy, 27400),
  /**
   * Kafka's second listener, which advertises the fault proxy's Kafka link: a client that
   * starts there keeps talking to the broker through the link.
   */
  kafkaLinked: portFromEnv(portEnvVars.kafkaLinked, 29094),
  /** nginx's stub_status, for its exporter: loopback only, beside the ingress. */
  nginxStatus: portFromEnv(portEnvVars.nginxStatus, 18079),
  // The backing services' exporters (tools/stack/src/exporters.mjs), each on its usual port
  // moved into the stack's 19xxx range; Kafka's is the JMX agent inside the broker.
  postgresExporter: portFromEnv(portEnvVars.postgresExporter, 19187),
  redisExporter: portFromEnv(portEnvVars.redisExporter, 19121),
  nginxExporter: portFromEnv(portEnvVars.nginxExporter, 19113),
  kafkaExporter: portFromEnv(portEnvVars.kafkaExporter, 19308),
  /** The local OCI registry (tools/stack/src/registry.mjs), run by the release step. */
  registry: portFromEnv(portEnvVars.registry, 25000),
});

export const ingressUrl = `http://${host}:${ports.ingress}`;
export const postgresUser = 'herald';
export const redisUrl = `redis://${host}:${ports.redis}`;
/**
 * A real three-master Redis Cluster beside the single node, so the scripts that must run
 * unchanged on production's Cluster are tested on one (comma list of seed nodes).
 */
export const REDIS_CLUSTER_MASTERS = 3;
export const redisClusterNodes = Array.from(
  { length: REDIS_CLUSTER_MASTERS },
  (_, i) => `redis://${host}:${ports.redisCluster + i}`,
).join(',');
export const kafkaBrokers = `${host}:${ports.kafka}`;
/** The fault proxy's link to Kafka's LINKED listener: the first port after its API. */
export const kafkaLinkPort = ports.toxiproxy + 1;
/** The local Prometheus, which scrapes every process's metrics port (tools/stack/src/prometheus.mjs). */
export const prometheusUrl = `http://${host}:${ports.prometheus}`;
/** Where the services export their spans: the trace receiver's OTLP/HTTP endpoint. */
export const tracesUrl = `http://${host}:${ports.traces}`;
/** The receiver's output: one span per line (tools/stack/src/traces.mjs). */
export const tracesDir = path.join(dataDir, 'traces');

/**
 * The share of traces the services begin themselves (HERALD_TRACE_SAMPLE_RATIO, 0..1). Default 0:
 * only requests that arrive with a sampled `traceparent` are traced (and, parent-based, all that
 * they cause), so the stack runs, and benchmarks, as fast as with tracing unsampled.
 */
export const traceSampleRatio = (() => {
  const raw = process.env.HERALD_TRACE_SAMPLE_RATIO;
  if (raw === undefined || raw.trim() === '') return 0;
  const ratio = Number(raw);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) {
    throw new Error(`HERALD_TRACE_SAMPLE_RATIO=${JSON.stringify(raw)} is not a ratio from 0 to 1`);
  }
  return ratio;
})();

/** postgres://herald@127.0.0.1:55432/<database> (trust authentication on loopback: no password). */
export function databaseUrl(database) {
  return `postgres://${postgresUser}@${host}:${ports.postgres}/${encodeURIComponent(database)}`;
}

/** A registry service's metrics port: its variable, else its service port's registry offset. */
function metricsPortOf(s) {
  const port = portFromEnv(servicePortEnvVar(s.name), s.port);
  return portFromEnv(metricsPortEnvVar(s.name), port + (s.metricsPort - s.port));
}

/**
 * A registry entry resolved for this checkout: ports after env overrides, absolute paths, and
 * where its log and pid live.
 * @param {typeof registry[number] & { replicaOf?: string }} s
 */
function resolveService(s) {
  const entry = path.resolve(repoRoot, s.entry);
  return Object.freeze({
    ...s,
    port: portFromEnv(servicePortEnvVar(s.name), s.port),
    portEnvVar: servicePortEnvVar(s.name),
    url: `http://${host}:${portFromEnv(servicePortEnvVar(s.name), s.port)}`,
    /**
     * Its Prometheus endpoint (METRICS_PORT), on loopback like the service. A stack whose
     * service ports are moved (HERALD_<NAME>_PORT, e.g. a second stack beside the first) moves
     * it along, the same distance from the service port as in the registry, unless
     * HERALD_<NAME>_METRICS_PORT places it.
     */
    metricsPort: metricsPortOf(s),
    metricsPortEnvVar: metricsPortEnvVar(s.name),
    metricsUrl: `http://${host}:${metricsPortOf(s)}/metrics`,
    entryPath: entry,
    migratePath: s.migrate ? path.resolve(repoRoot, s.migrate) : null,
    nodeArgs: s.nodeArgs ?? [],
    niceness: s.niceness ?? 0,
    routes: s.routes ?? [],
    allow: s.allow ?? [],
    topics: s.topics ?? [],
    secrets: s.secrets ?? [],
    callers: s.callers ?? [],
    holdsContactData: s.holdsContactData === true,
    after: s.after ?? [],
    /** The process this one is another instance of (`events-relay` for `events-relay-2`), else null. */
    replicaOf: s.replicaOf ?? null,
    logFile: path.join(logDir, `${s.name}.log`),
    pidFile: path.join(runDir, `${s.name}.pid`),
    stateFile: path.join(runDir, `${s.name}.json`),
  });
}

/**
 * The events outbox relay, the one process the stack can run several instances of: they share
 * the outbox's shards (libs/outbox), as the chart's replicas do.
 */
export const RELAY = 'events-relay';
/** At most this many relays: ports 100 apart from the first's stay clear of the other services'. */
export const MAX_EVENTS_RELAYS = 8;
const RELAY_PORT_STEP = 100;

/**
 * How many events relays `up` runs (HERALD_EVENTS_RELAYS, 1 to MAX_EVENTS_RELAYS, default 1): the
 * registry's `events-relay` and `events-relay-2` … `events-relay-N`.
 */
export const eventsRelays = (() => {
  const raw = process.env.HERALD_EVENTS_RELAYS;
  if (raw === undefined || raw.trim() === '') return 1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_EVENTS_RELAYS) {
    throw new Error(
      `HERALD_EVENTS_RELAYS=${JSON.stringify(raw)} is not a number of relays (1..${MAX_EVENTS_RELAYS})`,
    );
  }
  return n;
})();

/** The name of relay number `n` (1: the registry's own). */
export function relayName(n) {
  return n === 1 ? RELAY : `${RELAY}-${n}`;
}

const replicas = new Map();

/**
 * Relay number `n` ≥ 2 as a service of its own: the registry's relay with its name, its log and
 * pid files, and ports (n − 1) × 100 above the first relay's, after that relay's own overrides
 * (HERALD_EVENTS_RELAY_PORT moves them all); HERALD_EVENTS_RELAY_<N>_PORT and
 * HERALD_EVENTS_RELAY_<N>_METRICS_PORT place one.
 * @param {number} n
 */
export function relayReplica(n) {
  if (!Number.isInteger(n) || n < 2 || n > MAX_EVENTS_RELAYS) {
    throw new Error(`there is no events relay ${n} (2..${MAX_EVENTS_RELAYS})`);
  }
  if (!replicas.has(n)) {
    const base = registry.find((s) => s.name === RELAY);
    if (!base) throw new Error(`the registry has no ${RELAY}`);
    const first = resolveService(base);
    const step = (n - 1) * RELAY_PORT_STEP;
    replicas.set(
      n,
      resolveService({
        ...base,
        name: relayName(n),
        port: first.port + step,
        metricsPort: first.metricsPort + step,
        replicaOf: RELAY,
      }),
    );
  }
  return replicas.get(n);
}

/**
 * The registry (tools/stack/src/services.mjs) resolved for this checkout, with the relays
 * HERALD_EVENTS_RELAYS adds right after the registry's own.
 */
export const stackServices = Object.freeze(
  registry.flatMap((s) =>
    s.name === RELAY
      ? [
          resolveService(s),
          ...Array.from({ length: eventsRelays - 1 }, (_, i) => relayReplica(i + 2)),
        ]
      : [resolveService(s)],
  ),
);

// `after` names services earlier in the registry (the stack starts them in registry order).
stackServices.forEach((s, index) => {
  for (const name of s.after) {
    if (!stackServices.slice(0, index).some((x) => x.name === name)) {
      throw new Error(
        `service ${s.name} waits for ${JSON.stringify(name)}, which is not earlier in the registry`,
      );
    }
  }
});

export function findService(name) {
  const s = stackServices.find((x) => x.name === name) ?? relayByName(name);
  if (!s) {
    throw new Error(
      `unknown service ${JSON.stringify(name)}; the registry has: ${stackServices.map((x) => x.name).join(', ')}`,
    );
  }
  return s;
}

/**
 * A relay beyond HERALD_EVENTS_RELAYS by its name (`events-relay-3`), which a tool may run for
 * its own duration (`ensureRelays` in index.mjs), else undefined.
 * @param {string} name
 */
function relayByName(name) {
  const match = new RegExp(`^${RELAY}-(\\d+)$`).exec(name);
  const n = match ? Number(match[1]) : NaN;
  return n >= 2 && n <= MAX_EVENTS_RELAYS ? relayReplica(n) : undefined;
}

export function serviceUrl(name) {
  return findService(name).url;
}
