// Redis: redis-server on 127.0.0.1:56379, daemonized, append-only, files in .herald/redis.
// Written as a list of instances so that a Redis Cluster (several masters, each its own folder,
// port and `cluster-enabled yes`) is one more entry plus a `redis-cli --cluster create` step.
import net from 'node:net';
import path from 'node:path';
import { dataDir, host, infraDir, logDir, portEnvVars, ports } from './config.mjs';
import {
  StackError,
  assertPortFree,
  ensureDir,
  isAlive,
  livePid,
  renderTemplate,
  run,
  say,
  stopProcess,
  waitFor,
  writeIfChanged,
} from './util.mjs';

/** The Redis processes of the stack. */
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

export async function ensureRedis(bins) {
  const results = [];
  for (const inst of redisInstances()) results.push(await ensureInstance(bins, inst));
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
