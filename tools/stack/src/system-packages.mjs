// Finds the programs the stack runs, and installs the missing ones from Debian's packages.
import fs from 'node:fs';
import path from 'node:path';
import { say, StackError } from './output.mjs';
import { exists } from './files.mjs';
import { isRoot, run, which } from './processes.mjs';

const SBIN = ['/usr/local/sbin', '/usr/sbin', '/sbin'];

/** Highest /usr/lib/postgresql/<v>/bin holding initdb, pg_ctl and postgres (Debian layout). */
function findPostgresBin() {
  const override = process.env.HERALD_PG_BIN;
  const ok = (dir) =>
    ['initdb', 'pg_ctl', 'postgres', 'psql'].every((b) => exists(path.join(dir, b)));
  if (override) return ok(override) ? override : null;
  let versions = [];
  try {
    versions = fs
      .readdirSync('/usr/lib/postgresql')
      .filter((v) => /^\d+(\.\d+)?$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
  } catch {
    // not Debian's layout
  }
  for (const v of versions) {
    const dir = `/usr/lib/postgresql/${v}/bin`;
    if (ok(dir)) return dir;
  }
  const initdb = which('initdb', SBIN);
  if (initdb && ok(path.dirname(initdb))) return path.dirname(initdb);
  return null;
}

function findJava() {
  const home = process.env.JAVA_HOME;
  if (home && exists(path.join(home, 'bin', 'java'))) return path.join(home, 'bin', 'java');
  return which('java');
}

/**
 * @typedef {object} Requirement
 * @property {() => string | null} find the program's path, or null when it is missing
 * @property {string} apt the Debian package that provides it
 * @property {string} [daemon] the package's own system service, kept off
 */

/**
 * What each component needs: a finder and the Debian package that provides it.
 * `java` must be 17 or newer for Kafka 4 (Debian 12's default-jre-headless is 17).
 * `daemon`: the package's own system service, which the stack never wants beside its own
 * process: kept off after installing (see disableDaemon).
 */
/** @type {Record<string, Requirement>} */
const REQUIREMENTS = {
  postgres: { find: findPostgresBin, apt: 'postgresql' },
  redis: { find: () => which('redis-server', SBIN), apt: 'redis-server' },
  // Forms the local Redis Cluster (redis-server depends on it; listed for a trimmed install).
  redisCli: { find: () => which('redis-cli'), apt: 'redis-tools' },
  nginx: { find: () => which('nginx', SBIN), apt: 'nginx' },
  java: { find: findJava, apt: 'default-jre-headless' },
  mvn: { find: () => which('mvn'), apt: 'maven' },
  prometheus: { find: () => which('prometheus'), apt: 'prometheus', daemon: 'prometheus' },
  // Checks the rendered config and rules before a start or reload (same package).
  promtool: { find: () => which('promtool'), apt: 'prometheus' },
  // The backing services' exporters (exporters.mjs).
  postgresExporter: {
    find: () => which('prometheus-postgres-exporter'),
    apt: 'prometheus-postgres-exporter',
    daemon: 'prometheus-postgres-exporter',
  },
  redisExporter: {
    find: () => which('prometheus-redis-exporter'),
    apt: 'prometheus-redis-exporter',
    daemon: 'prometheus-redis-exporter',
  },
  nginxExporter: {
    find: () => which('prometheus-nginx-exporter'),
    apt: 'prometheus-nginx-exporter',
    daemon: 'prometheus-nginx-exporter',
  },
};

/**
 * @param {Record<string, Requirement>} [requirements]
 * @returns {Record<string, string | null>}
 */
export function findBinaries(requirements = REQUIREMENTS) {
  /** @type {Record<string, string | null>} */
  const found = {};
  for (const [name, req] of Object.entries(requirements)) found[name] = req.find();
  return found;
}

/**
 * Returns the programs' paths, installing missing packages with apt-get when we are root. While
 * installing, a temporary /usr/sbin/policy-rc.d (exit 101) keeps Debian's maintainer scripts from
 * starting system-wide daemons on the default ports; it is removed afterwards only if we made it.
 * `needed` limits the check (the Maven download of Kafka's jars needs mvn only when it runs);
 * `requirements` replaces the stack's own list (the benchmark installs its load generator so).
 * @param {{ requirements?: Record<string, Requirement>, needed?: string[] }} [options]
 */
export async function ensureSystemPackages({
  requirements = REQUIREMENTS,
  needed = Object.keys(requirements),
} = {}) {
  let found = findBinaries(requirements);
  const missing = needed.filter((n) => !found[n]);
  if (missing.length === 0) return found;

  const pkgs = [...new Set(missing.map((n) => requirements[n].apt))];
  const command = `apt-get install -y --no-install-recommends ${pkgs.join(' ')}`;
  if (!isRoot || !which('apt-get')) {
    throw new StackError(
      'system-packages',
      `missing ${missing.join(', ')}. Install them first, e.g.:\n\n    sudo apt-get update && sudo ${command}\n`,
    );
  }

  say(`system-packages: installing ${pkgs.join(' ')} (apt-get)`);
  const policy = '/usr/sbin/policy-rc.d';
  let createdPolicy = false;
  if (!exists(policy)) {
    fs.writeFileSync(
      policy,
      '#!/bin/sh\n# written by herald tools/stack/src: no daemons during install\nexit 101\n',
      {
        mode: 0o755,
      },
    );
    createdPolicy = true;
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive', NEEDRESTART_MODE: 'l' };
  const aptOpts = [
    '-o',
    'DPkg::Lock::Timeout=300',
    '-o',
    'Dpkg::Options::=--force-confdef',
    '-o',
    'Dpkg::Options::=--force-confold',
  ];
  try {
    await run('apt-get', [...aptOpts, '-q', 'update'], { env, timeoutMs: 10 * 60000 });
    await run('apt-get', [...aptOpts, '-q', 'install', '-y', '--no-install-recommends', ...pkgs], {
      env,
      timeoutMs: 20 * 60000,
    });
    const daemons = new Set(missing.map((n) => requirements[n].daemon).filter(Boolean));
    for (const daemon of daemons) await disableDaemon(daemon);
  } catch (err) {
    throw new StackError('system-packages', `apt-get failed (${command}): ${err.message}`);
  } finally {
    if (createdPolicy) fs.rmSync(policy, { force: true });
  }

  found = findBinaries(requirements);
  const still = needed.filter((n) => !found[n]);
  if (still.length) {
    throw new StackError('system-packages', `still missing after apt-get: ${still.join(', ')}`);
  }
  return found;
}

/**
 * Keeps a freshly installed package's system service off: policy-rc.d only stops it from starting
 * during the install, while its maintainer script enables it for every boot (on its default,
 * public port). Disables the systemd unit and the init script, and stops the service should a
 * policy that allows starts have let it run. The stack's own process has its own pid file and
 * user, so the init script's stop never reaches it.
 */
async function disableDaemon(name) {
  const helper = which('deb-systemd-helper');
  if (helper) await run(helper, ['disable', `${name}.service`], { check: false });
  const initScript = `/etc/init.d/${name}`;
  const updateRcd = which('update-rc.d', SBIN);
  if (exists(initScript) && updateRcd) await run(updateRcd, [name, 'disable'], { check: false });
  if (exists('/run/systemd/system') && which('systemctl')) {
    await run('systemctl', ['stop', `${name}.service`], { check: false, timeoutMs: 60000 });
  } else if (exists(initScript)) {
    await run(initScript, ['stop'], { check: false, timeoutMs: 60000 });
  }
}

/** The major version of a java executable (17 for "17.0.15"). */
export async function javaMajor(java) {
  const { stdout, stderr } = await run(java, ['-version'], { check: false });
  const m = /version "(\d+)(?:\.(\d+))?/.exec(`${stderr}${stdout}`);
  if (!m) return 0;
  return m[1] === '1' ? Number(m[2]) : Number(m[1]);
}
