// Prometheus on 127.0.0.1:19090 (Debian's package, run as a plain process): scrapes every
// process's metrics port and the backing services' exporters every 5 s and evaluates Herald's alert rules. Config, rules and the TSDB
// live in .herald/prometheus; a changed config or rules file is reloaded (SIGHUP), changed
// command-line flags (the port) restart it.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  dataDir,
  host,
  infraDir,
  logDir,
  portEnvVars,
  ports,
  prometheusUrl,
  repoRoot,
  runDir,
  stackServices,
} from './config.mjs';
import { StackError, say } from './output.mjs';
import { ensureDir, exists, renderTemplate, writeIfChanged } from './files.mjs';
import { cmdline, livePid, run, startDetached, stopProcess, waitFor } from './processes.mjs';
import { assertPortFree, httpRequest } from './net.mjs';
import { exporterTargets } from './exporters.mjs';

const component = 'prometheus';
const base = path.join(dataDir, 'prometheus');
export const prometheusPaths = {
  base,
  config: path.join(base, 'prometheus.yml'),
  rulesFile: path.join(base, 'rules', 'herald.rules.yaml'),
  data: path.join(base, 'data'),
  pidFile: path.join(runDir, 'prometheus.pid'),
  logFile: path.join(logDir, 'prometheus.log'),
};

/** Writes Herald's alert rules: `export async function writeAlertRules(file)`. */
export const alertRulesModule = path.join(
  repoRoot,
  'tools',
  'observability',
  'src',
  'alert-rules.mjs',
);

/** How long the local TSDB keeps samples: enough to look back over a day's work. */
const RETENTION = '3d';

/** The config Prometheus runs with: one job per process of the registry, after its template. */
export function renderConfig() {
  // The relays HERALD_EVENTS_RELAYS adds are targets of the first one's job, as the replicas of
  // one Deployment are: the rules' `job` selectors and sums take them all.
  /** @type {Map<string, string[]>} */
  const targets = new Map();
  for (const s of stackServices) {
    const job = s.replicaOf ?? s.name;
    targets.set(job, [...(targets.get(job) ?? []), `${host}:${s.metricsPort}`]);
  }
  // The backing services, through their exporters (exporters.mjs).
  for (const { job, target } of exporterTargets()) {
    targets.set(job, [...(targets.get(job) ?? []), target]);
  }
  const jobs = [...targets]
    .map(
      ([job, list]) =>
        `  - job_name: ${JSON.stringify(job)}\n` +
        '    static_configs:\n' +
        `      - targets: [${list.map((t) => JSON.stringify(t)).join(', ')}]`,
    )
    .join('\n');
  return renderTemplate(path.join(infraDir, 'prometheus', 'prometheus.yml.template'), {
    RULES_FILE: prometheusPaths.rulesFile,
    SCRAPE_CONFIGS: jobs,
  });
}

/**
 * Writes the rules file from `modulePath`'s writeAlertRules; true when its content changed.
 * Without that module the file holds no groups, so that rule_files stays valid.
 */
export async function writeRules(file = prometheusPaths.rulesFile, modulePath = alertRulesModule) {
  ensureDir(path.dirname(file));
  if (!exists(modulePath)) return writeIfChanged(file, 'groups: []\n');
  let writeAlertRules;
  try {
    ({ writeAlertRules } = await import(pathToFileURL(modulePath).href));
  } catch (err) {
    // It reads YAML with a package of the workspace, which `up --no-build` does not install.
    if (err.code !== 'ERR_MODULE_NOT_FOUND') throw err;
    throw new StackError(component, `${modulePath} cannot be loaded: ${err.message}`, {
      hint: 'Install the workspace first: npm install (or npm start, which does it).',
    });
  }
  if (typeof writeAlertRules !== 'function') {
    throw new StackError(component, `${modulePath} does not export writeAlertRules(file)`);
  }
  // Written beside it first: only a real change may reload Prometheus.
  const tmp = `${file}.new-${process.pid}`;
  try {
    await writeAlertRules(tmp);
    return writeIfChanged(file, fs.readFileSync(tmp, 'utf8'));
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

function prometheusArgs() {
  return [
    `--config.file=${prometheusPaths.config}`,
    `--storage.tsdb.path=${prometheusPaths.data}`,
    `--storage.tsdb.retention.time=${RETENTION}`,
    `--web.listen-address=${host}:${ports.prometheus}`,
    // k6's `--out experimental-prometheus-rw` writes a load test's metrics here, beside the
    // services' (loadtest/run.mjs points it at /api/v1/write).
    '--web.enable-remote-write-receiver',
  ];
}

export function prometheusPid() {
  // The config path names this stack's server: another checkout's Prometheus is not ours.
  return livePid(prometheusPaths.pidFile, prometheusPaths.config);
}

/** True when the server says it is ready to serve queries. */
export async function prometheusAnswers(timeoutMs = 2000) {
  try {
    return (await httpRequest(`${prometheusUrl}/-/ready`, { timeoutMs })).status === 200;
  } catch {
    return false;
  }
}

/** promtool checks the config and the rule files it names, as `nginx -t` does for nginx. */
async function checkConfig(bins) {
  if (!bins.promtool) return;
  const r = await run(bins.promtool, ['check', 'config', prometheusPaths.config], {
    check: false,
    timeoutMs: 60000,
  });
  if (r.code !== 0) {
    throw new StackError(
      component,
      `the rendered ${prometheusPaths.config} or its rules are invalid:\n${(r.stdout + r.stderr).trim()}`,
    );
  }
}

async function runtimeInfo() {
  const res = await httpRequest(`${prometheusUrl}/api/v1/status/runtimeinfo`, { timeoutMs: 2000 });
  return JSON.parse(res.body).data;
}

/** SIGHUP, then waits until the server took the new config and rules (or says it could not). */
async function reload(pid) {
  const before = (await runtimeInfo()).lastConfigTime;
  process.kill(pid, 'SIGHUP');
  const info = await waitFor(
    async () => {
      const now = await runtimeInfo();
      return now.lastConfigTime !== before || !now.reloadConfigSuccess ? now : null;
    },
    { timeoutMs: 15000, what: 'Prometheus to reload its config' },
  ).catch((err) => {
    throw new StackError(component, err.message, { logFile: prometheusPaths.logFile });
  });
  if (!info.reloadConfigSuccess) {
    throw new StackError(component, 'Prometheus refused the new config or rules', {
      logFile: prometheusPaths.logFile,
    });
  }
}

async function startServer(bins) {
  await assertPortFree(component, ports.prometheus, portEnvVars.prometheus);
  say(`prometheus: starting on ${prometheusUrl}`);
  await startDetached({
    component,
    label: 'Prometheus',
    cmd: bins.prometheus,
    args: prometheusArgs(),
    cwd: base,
    logFile: prometheusPaths.logFile,
    pidFile: prometheusPaths.pidFile,
    banner: 'starting Prometheus',
    ready: () => prometheusAnswers(1000),
    timeoutMs: 60000,
    intervalMs: 250,
    timeoutMessage: `Prometheus did not answer ${prometheusUrl}/-/ready within 60 s`,
  });
}

/**
 * Writes the config and the rules, then starts Prometheus, reloads it when they changed, or
 * restarts it when its flags changed. Returns 'started', 'restarted', 'reloaded' or 'running'.
 */
export async function ensurePrometheus(bins) {
  ensureDir(base);
  ensureDir(prometheusPaths.data);
  ensureDir(runDir);
  ensureDir(logDir);
  const configChanged = writeIfChanged(prometheusPaths.config, renderConfig());
  const rulesChanged = await writeRules();
  const pid = prometheusPid();
  if (pid && cmdline(pid) !== [bins.prometheus, ...prometheusArgs()].join(' ')) {
    say('prometheus: its flags changed, restarting');
    await stopPrometheus();
    await checkConfig(bins);
    await startServer(bins);
    return 'restarted';
  }
  if (!pid) {
    await checkConfig(bins);
    await startServer(bins);
    return 'started';
  }
  if (configChanged || rulesChanged) {
    await checkConfig(bins);
    say('prometheus: config or rules changed, reloading');
    await reload(pid);
    return 'reloaded';
  }
  try {
    await waitFor(() => prometheusAnswers(), {
      timeoutMs: 30000,
      what: `${prometheusUrl}/-/ready`,
    });
  } catch (err) {
    throw new StackError(component, err.message, { logFile: prometheusPaths.logFile });
  }
  return 'running';
}

export async function stopPrometheus() {
  const pid = prometheusPid();
  if (!pid) {
    fs.rmSync(prometheusPaths.pidFile, { force: true });
    return 'not running';
  }
  say('prometheus: stopping');
  // SIGTERM: it closes the TSDB head cleanly; SIGKILL after 30 s.
  const r = await stopProcess(pid, { signal: 'SIGTERM', timeoutMs: 30000, group: true });
  fs.rmSync(prometheusPaths.pidFile, { force: true });
  return r;
}

export async function prometheusStatus() {
  const pid = prometheusPid();
  const ok = pid ? await prometheusAnswers() : false;
  return {
    component,
    state: ok ? 'running' : pid ? 'not answering' : 'stopped',
    pid,
    address: prometheusUrl,
    logFile: prometheusPaths.logFile,
    ok,
  };
}
