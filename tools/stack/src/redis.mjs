// Redis: redis-server on 127.0.0.1:56379, daemonized, append-only, files in .herald/redis, and a
// three-master Redis Cluster on 56380-56382 (.herald/redis-cluster-N), the shape production runs,
// for the tests of the scripts that must work unchanged on a Cluster.
import net from 'node:net';
import path from 'node:path';
import {
  REDIS_CLUSTER_MASTERS,
  dataDir,
  host,
  infraDir,
  logDir,
  portEnvVars,
  ports,
} from './config.mjs';
import { StackError, say } from './output.mjs';
import { ensureDir, renderTemplate, writeIfChanged } from './files.mjs';
import { isAlive, livePid, run, stopProcess, waitFor } from './processes.mjs';
import { assertPortFree } from './net.mjs';

/**
 * @typedef {object} RedisInstance
 * @property {string} name
 * @property {number} port
 * @property {string} portEnvVar
 * @property {string} dir
 * @property {string} confFile
 * @property {string} pidFile
 * @property {string} logFile
 * @property {boolean} [cluster] a master of the local Redis Cluster
 * @property {string} extra lines added to its redis.conf
 */

/**
 * The Redis processes of the stack.
 * @returns {RedisInstance[]}
 */
export function redisInstances() {
  const dir = path.join(dataDir, 'redis');
  return [
    {
      name: 'redis',
      port: ports.redis,
      portEnvVar: portEnvVars.redis,
      dir,
      confFile: path.join(dir, 'redis.conf'),
      pidFile: path.join(dir, 'redis.pid'),
      logFile: path.join(logDir, 'redis.log'),
      extra: '',
    },
    ...Array.from({ length: REDIS_CLUSTER_MASTERS }, (_, i) => {
      const name = `redis-cluster-${i + 1}`;
      const clusterDir = path.join(dataDir, name);
      return {
        name,
        port: ports.redisCluster + i,
        portEnvVar: portEnvVars.redisCluster,
        dir: clusterDir,
        confFile: path.join(clusterDir, 'redis.conf'),
        pidFile: path.join(clusterDir, 'redis.pid'),
        logFile: path.join(logDir, `${name}.log`),
        cluster: true,
        extra: [
          'cluster-enabled yes',
          // The bus port defaults to port + 10000, past 65535 here: 56390-56392 instead.
          `cluster-port ${ports.redisCluster + 10 + i}`,
          'cluster-config-file nodes.conf',
          'cluster-node-timeout 5000',
          // Three masters and no replicas: losing one is losing a third of the slots, and the
          // local stack should say so rather than limp on.
          'cluster-require-full-coverage yes',
        ].join('\n'),
      };
    }),
  ];
}

/** Sends one RESP command; resolves the first reply line (or '' when the server closed). */
export function redisCommand(port, args, timeoutMs = 1000) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    let buf = '';
    let settled = false;
    const finish = (fn, v) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      fn(v);
    };
    socket.setTimeout(timeoutMs, () => finish(reject, new Error('redis: timeout')));
    socket.once('connect', () => {
      socket.write(
        `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`,
      );
    });
    socket.on('data', (d) => {
      buf += d;
      const i = buf.indexOf('\r\n');
      if (i >= 0) finish(resolve, buf.slice(0, i));
    });
    socket.once('end', () => finish(resolve, buf));
    socket.once('error', (err) => finish(reject, err));
  });
}

export async function redisPing(port = ports.redis) {
  try {
    return (await redisCommand(port, ['PING'])) === '+PONG';
  } catch {
    return false;
  }
}

function renderConf(inst) {
  return renderTemplate(path.join(infraDir, 'redis', 'redis.conf.template'), {
    PORT: inst.port,
    PID_FILE: inst.pidFile,
    LOG_FILE: inst.logFile,
    DIR: inst.dir,
    EXTRA: inst.extra,
  });
}

async function ensureInstance(bins, inst) {
  ensureDir(inst.dir);
  ensureDir(logDir);
  const changed = writeIfChanged(inst.confFile, renderConf(inst));
  let pid = livePid(inst.pidFile, 'redis');
  let result = 'running';
  if (pid && changed) {
    say(`${inst.name}: settings changed, restarting`);
    await stopInstance(inst);
    pid = null;
    result = 'restarted';
  }
  if (!pid) {
    await assertPortFree(inst.name, inst.port, inst.portEnvVar);
    say(`${inst.name}: starting on ${host}:${inst.port}`);
    try {
      await run(bins.redis, [inst.confFile], { cwd: inst.dir, detached: true, timeoutMs: 30000 });
    } catch (err) {
      throw new StackError(inst.name, err.message, { logFile: inst.logFile });
    }
    if (result === 'running') result = 'started';
  }
  try {
    await waitFor(() => redisPing(inst.port), {
      timeoutMs: 30000,
      what: `Redis PING on ${inst.port}`,
    });
  } catch (err) {
    throw new StackError(inst.name, err.message, { logFile: inst.logFile });
  }
  return result;
}

/** Joins the cluster instances into one Cluster the first time (nodes.conf remembers it). */
async function ensureClusterFormed(bins) {
  const masters = redisInstances().filter((i) => i.cluster);
  const info = await redisBulk(masters[0].port, ['CLUSTER', 'INFO']).catch(() => '');
  if (/cluster_state:ok/.test(info)) return;
  const known = Number(/cluster_known_nodes:(\d+)/.exec(info)?.[1] ?? 0);
  if (known <= 1) {
    say(`redis-cluster: creating a Cluster of ${masters.length} masters`);
    await run(
      bins.redisCli,
      [
        '--cluster',
        'create',
        ...masters.map((m) => `${host}:${m.port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
      { timeoutMs: 60000 },
    );
  }
  await waitFor(
    async () => /cluster_state:ok/.test(await redisBulk(masters[0].port, ['CLUSTER', 'INFO'])),
    { timeoutMs: 30000, what: 'the Redis Cluster to report cluster_state:ok' },
  );
}

/** A bulk-string reply, whole (CLUSTER INFO is several lines). */
function redisBulk(port, args) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    let buf = '';
    socket.setTimeout(1000, () => {
      socket.destroy();
      reject(new Error('redis: timeout'));
    });
    socket.once('connect', () => {
      socket.write(
        `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`,
      );
    });
    socket.on('data', (d) => {
      buf += d;
      const header = /^\$(\d+)\r\n/.exec(buf);
      if (header && buf.length >= header[0].length + Number(header[1])) {
        socket.destroy();
        resolve(buf.slice(header[0].length, header[0].length + Number(header[1])));
      } else if (buf.startsWith('-')) {
        socket.destroy();
        reject(new Error(buf.trim()));
      }
    });
    socket.once('error', reject);
  });
}

export async function ensureRedis(bins) {
  const results = [];
  for (const inst of redisInstances()) results.push(await ensureInstance(bins, inst));
  await ensureClusterFormed(bins);
  return results.includes('started')
    ? 'started'
    : results.includes('restarted')
      ? 'restarted'
      : 'running';
}

async function stopInstance(inst) {
  const pid = livePid(inst.pidFile, 'redis');
  if (!pid) return 'not running';
  say(`${inst.name}: stopping`);
  // SHUTDOWN writes the append-only file and a snapshot; the connection just closes.
  await redisCommand(inst.port, ['SHUTDOWN'], 5000).catch(() => {});
  const exited = await waitFor(() => !isAlive(pid), {
    timeoutMs: 10000,
    what: 'redis to exit',
  }).catch(() => false);
  if (exited) return 'stopped';
  return stopProcess(pid, { signal: 'SIGTERM', timeoutMs: 15000 });
}

export async function stopRedis() {
  for (const inst of redisInstances()) await stopInstance(inst);
}

export async function redisStatus() {
  return Promise.all(
    redisInstances().map(async (inst) => {
      const pid = livePid(inst.pidFile, 'redis');
      const ok = pid ? await redisPing(inst.port) : false;
      return {
        component: inst.name,
        state: ok ? 'running' : pid ? 'not answering' : 'stopped',
        pid,
        address: `${host}:${inst.port}`,
        logFile: inst.logFile,
        ok,
      };
    }),
  );
}
