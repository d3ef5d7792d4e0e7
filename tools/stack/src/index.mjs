// The local stack as a library: `up`, `down`, `isUp`, `status`, `serviceEnv`, `ensureRelays`
// and the addresses, for tools/stack/src/cli.mjs (the CLI), the test runner, the benchmark and
// the fault suite. Node built-ins only.
import path from 'node:path';
import {
  MAX_EVENTS_RELAYS,
  RELAY,
  dataDir,
  databaseUrl,
  eventsRelays,
  findService,
  host,
  ingressUrl,
  kafkaBrokers,
  logDir,
  ports,
  portEnvVars,
  prometheusUrl,
  redisClusterNodes,
  redisUrl,
  relayName,
  repoRoot,
  runDir,
  serviceUrl,
  stackServices,
  traceSampleRatio,
  tracesUrl,
} from './config.mjs';
import { buildWorkspace, ensureNodeModules } from './build.mjs';
import { ensureKafka, kafkaPaths, kafkaStatus, stopKafka } from './kafka.mjs';
import { ensureNginx, nginxPaths, nginxStatus, stopNginx } from './nginx.mjs';
import { ensurePostgres, postgresPaths, postgresStatus, stopPostgres } from './postgres.mjs';
import {
  ensurePrometheus,
  prometheusPaths,
  prometheusStatus,
  stopPrometheus,
} from './prometheus.mjs';
import { ensureRedis, redisInstances, redisStatus, stopRedis } from './redis.mjs';
import { adminToken, adminTokenFile, ensureSecrets } from './secrets.mjs';
import { ensureService, serviceEnv, serviceStatus, stopService } from './service-runner.mjs';
import {
  ensureTraceReceiver,
  stopTraceReceiver,
  traceReceiverStatus,
  tracesPaths,
} from './traces.mjs';
import { ensureSystemPackages, findBinaries } from './system-packages.mjs';
import { StackError, isQuiet, say, setQuiet } from './output.mjs';
import { ensureDir } from './files.mjs';
import { withLock } from './lock.mjs';
import { ensureRelays, extraRelayLogs, extraRelays } from './relays.mjs';
import { ensureToxiproxy, faultProxyOn, stopToxiproxy } from './toxiproxy.mjs';
import { stopRegistry } from './registry.mjs';
import { EXPORTERS, ensureExporters, exportersStatus, stopExporters } from './exporters.mjs';

export {
  MAX_EVENTS_RELAYS,
  RELAY,
  StackError,
  dataDir,
  databaseUrl,
  ensureRelays,
  eventsRelays,
  host,
  ingressUrl,
  kafkaBrokers,
  logDir,
  portEnvVars,
  ports,
  prometheusUrl,
  redisClusterNodes,
  redisUrl,
  relayName,
  serviceEnv,
  tracesPaths,
  tracesUrl,
  serviceUrl,
  stackServices as services,
};

/** Names of the infrastructure components, in start order. */
export const infraComponents = ['postgres', 'redis', 'kafka', 'nginx', 'prometheus', 'traces'];

/** Runs tasks in parallel; waits for all of them, then throws the first failure. */
async function settle(tasks) {
  const outcomes = await Promise.allSettled(tasks.map(([, fn]) => fn()));
  const results = {};
  let firstError;
  outcomes.forEach((o, i) => {
    if (o.status === 'fulfilled') results[tasks[i][0]] = o.value;
    else firstError ??= o.reason;
  });
  if (firstError) throw firstError;
  return results;
}

function ensureLayout() {
  ensureDir(dataDir, 0o755);
  ensureDir(logDir);
  ensureDir(runDir);
}

// ---------------------------------------------------------------------------------------------
// up / down / status

/**
 * Brings the stack up, idempotently; a second call with nothing to do takes about a second.
 * @param {object} [opts]
 * @param {boolean} [opts.build=true]            npm install when stale, then `turbo run build`
 * @param {boolean} [opts.infraOnly=false]       PostgreSQL, Redis, Kafka, nginx, Prometheus; no services
 * @param {boolean} [opts.quiet=false]           no progress output, no summary
 * @param {boolean} [opts.restartServices=false] restart services that are already running
 * @param {string} [opts.node]                   the node binary services start with (default: this one)
 * @returns {Promise<{results: Record<string,string>, started: string[], seconds: number}>}
 *   `results[component]` is 'started', 'restarted', 'reloaded', 'running' or 'not built';
 *   `started` lists what this call started, e.g. to `down({ only: started })` afterwards.
 */
export async function up(opts = {}) {
  const {
    build = true,
    infraOnly = false,
    quiet = isQuiet(),
    restartServices = false,
    node = process.execPath,
  } = opts;
  const previousQuiet = isQuiet();
  setQuiet(quiet);
  const t0 = Date.now();
  try {
    const results = await withLock(async () => {
      ensureLayout();
      const bins = await ensureSystemPackages();
      if (build && !infraOnly) {
        await ensureNodeModules();
        await buildWorkspace();
      }
      // Services started below take ADMIN_TOKEN from the environment when it is set.
      ensureSecrets({ adminToken: infraOnly ? undefined : process.env.ADMIN_TOKEN });
      const out = await settle([
        ['postgres', () => ensurePostgres(bins)],
        ['redis', () => ensureRedis(bins)],
        ['kafka', () => ensureKafka(bins)],
        ['nginx', () => ensureNginx(bins)],
        ['prometheus', () => ensurePrometheus(bins)],
        // Before the services, which export their spans to it from their first request.
        ['traces', () => ensureTraceReceiver()],
        // Only for a caller that routes the services through it (the fault suite).
        ...(faultProxyOn() ? [['toxiproxy', () => ensureToxiproxy()]] : []),
      ]);
      // After what they export: nginx's exporter, for one, reads nginx's counters as it starts.
      Object.assign(out, await ensureExporters(bins));
      if (!infraOnly) {
        // In parallel, except that a service waits for those it is `after` (their migrations).
        const starting = new Map();
        const startAfter = async (s) => {
          await Promise.all(s.after.map((name) => starting.get(name)));
          return ensureService(s, { restart: restartServices, node });
        };
        Object.assign(
          out,
          await settle(
            stackServices.map((s) => [
              s.name,
              () => {
                const started = startAfter(s);
                starting.set(s.name, started);
                return started;
              },
            ]),
          ),
        );
      }
      return out;
    });
    const seconds = (Date.now() - t0) / 1000;
    if (!quiet) {
      const rows = await status();
      say(`\nHerald local stack is up (${seconds.toFixed(1)} s).\n`);
      say(formatStatus(rows));
      say(gettingStarted({ infraOnly, rows }));
    }
    return {
      results,
      started: Object.keys(results).filter((k) => results[k] === 'started'),
      seconds,
    };
  } finally {
    setQuiet(previousQuiet);
  }
}

/**
 * Stops the stack (nginx and Prometheus, services, then Kafka, Redis, PostgreSQL and the trace
 * receiver). Idempotent; data stays.
 * @param {object} [opts]
 * @param {string[]} [opts.only] stop just these components (names as in `status()`)
 * @param {boolean} [opts.quiet]
 */
export async function down(opts = {}) {
  const { only, quiet = isQuiet() } = opts;
  const previousQuiet = isQuiet();
  setQuiet(quiet);
  const want = (name) => !only || only.includes(name);
  try {
    await withLock(async () => {
      const bins = findBinaries();
      await Promise.all([
        want('nginx') ? stopNginx() : null,
        want('prometheus') ? stopPrometheus() : null,
        EXPORTERS.some((e) => want(e.name)) ? stopExporters() : null,
      ]);
      await Promise.all(
        [...stackServices, ...extraRelays()].filter((s) => want(s.name)).map((s) => stopService(s)),
      );
      await Promise.all([
        want('kafka') ? stopKafka() : null,
        // After the services: their last spans are flushed to it as they stop.
        want('traces') ? stopTraceReceiver() : null,
        want('toxiproxy') ? stopToxiproxy() : null,
        want('registry') ? stopRegistry() : null,
        want('redis') ? stopRedis() : null,
        want('postgres') ? stopPostgres(bins) : null,
      ]);
    });
  } finally {
    setQuiet(previousQuiet);
  }
}

/**
 * One row per component: {component, state, pid, address, logFile, ok, expected}.
 * `expected` is false for services that are not built (they do not count for isUp()), and for a
 * relay beyond HERALD_EVENTS_RELAYS (`ensureRelays`) that is no longer running.
 */
export async function status() {
  const rows = await Promise.all([
    postgresStatus(),
    redisStatus(),
    kafkaStatus(),
    nginxStatus(),
    prometheusStatus(),
    traceReceiverStatus(),
    exportersStatus(),
    ...stackServices.map((s) => serviceStatus(s)),
    ...extraRelays().map(async (s) => {
      const row = await serviceStatus(s);
      return { ...row, expected: row.expected && row.pid !== null };
    }),
  ]);
  return rows.flat().map((r) => ({ expected: true, ...r }));
}

/**
 * True when every component answers (PostgreSQL, Redis, Kafka, nginx, Prometheus, the trace
 * receiver and each built service).
 */
export async function isUp() {
  const rows = await status();
  return rows.every((r) => r.ok || !r.expected);
}

/** Log files per component, for `logs`. */
export function logFiles() {
  const files = { postgres: [postgresPaths.logFile] };
  for (const r of redisInstances()) files[r.name] = [r.logFile];
  files.kafka = [kafkaPaths.logFile];
  files.nginx = [nginxPaths.accessLog, nginxPaths.errorLog];
  files.prometheus = [prometheusPaths.logFile];
  files.traces = [tracesPaths.logFile];
  for (const s of stackServices) files[s.name] = [s.logFile];
  // Relays a tool ran beyond HERALD_EVENTS_RELAYS, while their logs are there.
  for (const s of extraRelayLogs()) files[s.name] = [s.logFile];
  return files;
}

export function formatStatus(rows) {
  const head = ['COMPONENT', 'STATE', 'PID', 'ADDRESS'];
  const body = rows.map((r) => [r.component, r.state, r.pid ? String(r.pid) : '-', r.address]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  return [head, ...body]
    .map((cols) => `  ${cols.map((c, i) => c.padEnd(widths[i])).join('  ')}`.trimEnd())
    .join('\n');
}

/** A path as shown to people: relative when it is inside the repository, else absolute. */
function shown(file) {
  const rel = path.relative(repoRoot, file);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
}

/** A word for a POSIX shell: as it is when that is safe, else in single quotes. */
function shellQuote(value) {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

function gettingStarted({ infraOnly, rows }) {
  const token = adminToken();
  const fromEnv = Boolean(process.env.ADMIN_TOKEN);
  const tokenSource = !fromEnv
    ? shown(adminTokenFile)
    : infraOnly
      ? 'from $ADMIN_TOKEN'
      : `from $ADMIN_TOKEN, saved in ${shown(adminTokenFile)}`;
  const localUrl = `http://localhost:${ports.ingress}`;
  const lines = [
    '',
    'Getting started',
    `  Ingress:      ${ingressUrl}  (${localUrl})`,
    `  Prometheus:   ${prometheusUrl}  (every process scraped every 5 s, Herald's alert rules)`,
    `  Admin token:  ${token}  (${tokenSource})`,
    `  Data & logs:  ${shown(dataDir)}/`,
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()
      ? `  Traces:       to $OTEL_EXPORTER_OTLP_ENDPOINT (${process.env.OTEL_EXPORTER_OTLP_ENDPOINT.trim()})`
      : `  Traces:       ${tracesUrl}/v1/traces → ${shown(tracesPaths.spansFile)}  (${
          traceSampleRatio === 0
            ? 'requests sent with a sampled traceparent'
            : `${traceSampleRatio * 100} % of requests, and those sent with a sampled traceparent`
        }; npm run stack -- traces)`,
  ];
  const authUp = rows.some((r) => r.component === 'auth' && r.ok);
  if (infraOnly || !authUp) {
    lines.push(
      '',
      '  Services are not running (--infra-only or not built): `npm start` starts them.',
    );
  } else {
    lines.push(
      '',
      '  Create a tenant and a secret key, then exchange it for an access token:',
      '',
      // The CLI defaults to http://localhost:8080 and .herald/admin-token: say both, so the
      // lines work with HERALD_PORT, HERALD_DATA_DIR or ADMIN_TOKEN set too.
      `    export HERALD_URL=${shellQuote(ingressUrl)}`,
      `    export ADMIN_TOKEN=${shellQuote(token)}`,
      '    TENANT=$(npm run -s admin -- tenants create --name "Acme" --get id)',
      '    KEY=$(npm run -s admin -- keys create --tenant "$TENANT" --kind secret --json)',
      '    CLIENT_ID=$(node -pe \'JSON.parse(process.argv[1]).clientId\' "$KEY")',
      '    SECRET=$(node -pe \'JSON.parse(process.argv[1]).secret\' "$KEY")',
      '    curl -s -X POST -u "$CLIENT_ID:$SECRET" "$HERALD_URL/v1/token"',
    );
  }
  lines.push(
    '',
    '  Stop: npm stop    Status: npm run stack -- status    Logs: npm run stack -- logs [component] [-f]',
    '',
  );
  return lines.join('\n');
}

export { findService };
