// The backing services' Prometheus exporters, from Debian's packages, as plain processes on
// loopback: PostgreSQL (prometheus-postgres-exporter), Redis (prometheus-redis-exporter) and
// nginx (prometheus-nginx-exporter, reading the stub_status the stack's nginx serves on its own
// port). Kafka's broker metrics come from the JMX exporter agent inside its JVM (kafka.mjs). The
// stack's Prometheus scrapes each as a job named after the service (`postgres`, `redis`, `nginx`,
// `kafka`), beside Herald's processes, and HeraldTargetDown watches them all.
import path from 'node:path';
import { databaseUrl, host, logDir, portEnvVars, ports, redisUrl, runDir } from './config.mjs';
import { ensureDir } from './files.mjs';
import { httpRequest, assertPortFree } from './net.mjs';
import { cmdline, livePid, startDetached, stopProcess } from './processes.mjs';
import { say } from './output.mjs';

/**
 * @typedef {object} Exporter
 * @property {string} name        the component's name in `status`
 * @property {string} job         the Prometheus job: the service it exports
 * @property {string} binary      its key in the stack's system packages (system-packages.mjs)
 * @property {keyof typeof ports} port
 * @property {() => string[]} args
 * @property {() => Record<string, string>} [env]
 */

/** @type {Exporter[]} */
export const EXPORTERS = [
  {
    name: 'postgres-exporter',
    job: 'postgres',
    binary: 'postgresExporter',
    port: 'postgresExporter',
    args: () => [`--web.listen-address=${host}:${ports.postgresExporter}`],
    // The stack's own user, trusted on loopback: the statistics views of every database.
    env: () => ({ DATA_SOURCE_NAME: `${databaseUrl('postgres')}?sslmode=disable` }),
  },
  {
    name: 'redis-exporter',
    job: 'redis',
    binary: 'redisExporter',
    port: 'redisExporter',
    args: () => ['-redis.addr', redisUrl, '-web.listen-address', `${host}:${ports.redisExporter}`],
  },
  {
    name: 'nginx-exporter',
    job: 'nginx',
    binary: 'nginxExporter',
    port: 'nginxExporter',
    args: () => [
      '-nginx.scrape-uri',
      `http://${host}:${ports.nginxStatus}/stub_status`,
      // It reads nginx's counters once as it starts, and exits if it cannot.
      '-nginx.retries',
      '10',
      '-nginx.retry-interval',
      '1s',
      '-web.listen-address',
      `${host}:${ports.nginxExporter}`,
    ],
  },
];

/** Every backing service's scrape target: `[{job, target}]`, Kafka's JMX agent included. */
export function exporterTargets() {
  return [
    ...EXPORTERS.map((e) => ({ job: e.job, target: `${host}:${ports[e.port]}` })),
    { job: 'kafka', target: `${host}:${ports.kafkaExporter}` },
  ];
}

const pidFile = (e) => path.join(runDir, `${e.name}.pid`);
const logFile = (e) => path.join(logDir, `${e.name}.log`);
const metricsUrl = (e) => `http://${host}:${ports[e.port]}/metrics`;

async function answers(e) {
  try {
    return (await httpRequest(metricsUrl(e), { timeoutMs: 2000 })).status === 200;
  } catch {
    return false;
  }
}

/**
 * Starts each exporter that is not running, and restarts one whose command line changed (a moved
 * port). Resolves {name: 'started' | 'restarted' | 'running'}.
 * @param {Record<string, string | null>} bins
 */
export async function ensureExporters(bins) {
  ensureDir(runDir);
  ensureDir(logDir);
  const results = {};
  await Promise.all(
    EXPORTERS.map(async (e) => {
      const cmd = bins[e.binary];
      const pid = livePid(pidFile(e), path.basename(cmd));
      const wanted = [cmd, ...e.args()].join(' ');
      if (pid && cmdline(pid) === wanted) {
        results[e.name] = 'running';
        return;
      }
      if (pid) await stopProcess(pid, { timeoutMs: 5000 });
      await assertPortFree(e.name, ports[e.port], portEnvVars[e.port]);
      say(`${e.name}: starting on ${metricsUrl(e)}`);
      await startDetached({
        component: e.name,
        label: e.name,
        cmd,
        args: e.args(),
        env: { ...process.env, ...e.env?.() },
        logFile: logFile(e),
        pidFile: pidFile(e),
        banner: `starting ${e.name}`,
        ready: () => answers(e),
        timeoutMs: 30000,
        timeoutMessage: `${e.name} did not answer ${metricsUrl(e)} within 30 s`,
      });
      results[e.name] = pid ? 'restarted' : 'started';
    }),
  );
  return results;
}

export async function stopExporters() {
  await Promise.all(
    EXPORTERS.map(async (e) => {
      const pid = livePid(pidFile(e), 'exporter');
      if (pid) await stopProcess(pid, { timeoutMs: 5000 });
    }),
  );
}

/** One `status` row per exporter. */
export async function exportersStatus() {
  return Promise.all(
    EXPORTERS.map(async (e) => {
      const pid = livePid(pidFile(e), 'exporter');
      const ok = pid ? await answers(e) : false;
      return {
        component: e.name,
        state: ok ? 'running' : pid ? 'not answering' : 'stopped',
        pid,
        address: metricsUrl(e),
        logFile: logFile(e),
        ok,
      };
    }),
  );
}
