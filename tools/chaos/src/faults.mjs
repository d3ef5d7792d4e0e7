// The faults, one at a time, each injected while the load runs and then recovered with the
// stack's own controls (`up` starts whatever is not running). Processes are found through the
// stack's pid files, so the faults hit the stack this environment configures (HERALD_DATA_DIR,
// the HERALD_*_PORT variables) and nothing else. Two events relays run throughout (relays.mjs).
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import {
  down,
  findService,
  host,
  isUp,
  redisClusterNodes,
  services as stackServices,
  up,
} from '@herald/stack/index.mjs';
import { ensureKafka, kafkaPid } from '@herald/stack/kafka.mjs';
import { isQuiet, setQuiet } from '@herald/stack/output.mjs';
import { ensurePostgres, postgresPaths, postgresPid } from '@herald/stack/postgres.mjs';
import { isAlive, isRoot, livePid, run } from '@herald/stack/processes.mjs';
import { ensureRedis, redisCommand, redisInstances } from '@herald/stack/redis.mjs';
import { ensureService } from '@herald/stack/service-runner.mjs';
import { findBinaries } from '@herald/stack/system-packages.mjs';
import { partitionOffsets } from '@herald/kafka';
import { EVENTS_TOPIC, kafkaClient } from './oracle.mjs';
import { RELAYS, ensureSuiteRelays, relayInTransaction, stopSuiteRelays } from './relays.mjs';
import { SHORT_NETWORK_FAULTS, linksThroughProxy, networkFaults } from './network-faults.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every `everyMs` until it holds (true) or `withinMs` passes (false). */
async function until(check, withinMs, everyMs = 5) {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await sleep(everyMs);
  }
}

function isZombie(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

/** SIGKILL, then waits until the process is gone. */
async function kill9(pid, what) {
  if (!pid) throw new Error(`${what} is not running: nothing to kill`);
  process.kill(pid, 'SIGKILL');
  const gone = await until(() => !isAlive(pid) || isZombie(pid), 10_000, 20);
  if (!gone) throw new Error(`${what} (pid ${pid}) is still alive after SIGKILL`);
  return pid;
}

const servicePid = (name) => {
  const s = findService(name);
  return livePid(s.pidFile, s.entryPath);
};

/**
 * Starts whatever is not running, as `npm start` would (without building), and the relays the
 * suite runs with.
 */
export async function restart() {
  await up({ build: false, quiet: true });
  await ensureSuiteRelays();
}

/** The relay the relay fault killed last, which its recovery starts again. */
let killedRelay = 'events-relay';

/**
 * Starts one component again with the stack's own start-up for it (what `up` runs for that
 * component), leaving the others alone: `up` would also restart every service whose build is
 * newer than its process, a second fault in the middle of this one when the checkout is being
 * built meanwhile.
 */
export async function bringBack(component) {
  const bins = findBinaries();
  const wasQuiet = isQuiet();
  setQuiet(true);
  try {
    if (component === 'postgres') await ensurePostgres(bins);
    else if (component === 'kafka') await ensureKafka(bins);
    else if (component === 'redis') await ensureRedis(bins);
    else await ensureService(findService(component));
  } finally {
    setQuiet(wasQuiet);
  }
}

/** The services that use Redis (budgets, the subscription mirror, dedup, the exchange guard). */
const REDIS_USERS = ['auth', 'contacts', 'events', 'billing'];

const clusterSetting = { original: process.env.REDIS_CLUSTER_NODES, onCluster: false };

/**
 * Restarts the services that use Redis with REDIS_CLUSTER_NODES set to the stack's three-master
 * Cluster (`on`), or as they were (`off`): production runs them on a Cluster, the local stack on
 * a single node.
 */
export async function servicesOnCluster(on) {
  if (on === clusterSetting.onCluster) return;
  if (on) process.env.REDIS_CLUSTER_NODES = redisClusterNodes;
  else if (clusterSetting.original === undefined) delete process.env.REDIS_CLUSTER_NODES;
  else process.env.REDIS_CLUSTER_NODES = clusterSetting.original;
  const names = REDIS_USERS.filter((n) => stackServices.some((s) => s.name === n));
  await down({ only: names, quiet: true });
  clusterSetting.onCluster = on;
  await restart();
}

/** The masters of the stack's Redis Cluster. */
const clusterMasters = () => redisInstances().filter((i) => 'cluster' in i && i.cluster);

/** The Cluster master holding `key`'s slot: the one that answers it rather than redirecting. */
async function clusterMasterOf(key) {
  const masters = clusterMasters();
  const reply = await redisCommand(masters[0].port, ['GET', key]);
  const moved = /^-(?:MOVED|ASK) \d+ [^:]+:(\d+)/.exec(reply);
  const port = moved ? Number(moved[1]) : masters[0].port;
  const master = masters.find((m) => m.port === port);
  if (!master) throw new Error(`no Cluster master of the stack listens on ${port}`);
  return master;
}

/** CLUSTER INFO of one node, whole ('' when it does not answer). */
function clusterInfo(port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    let buf = '';
    const done = (text) => {
      socket.destroy();
      resolve(text);
    };
    socket.setTimeout(1000, () => done(''));
    socket.once('connect', () => socket.write('*2\r\n$7\r\nCLUSTER\r\n$4\r\nINFO\r\n'));
    socket.on('data', (d) => {
      buf += d;
      const header = /^\$(\d+)\r\n/.exec(buf);
      if (header && buf.length >= header[0].length + Number(header[1])) done(buf);
    });
    socket.once('error', () => done(''));
  });
}

/** Every master of the stack's Cluster reports cluster_state:ok. */
async function clusterOk() {
  const masters = clusterMasters();
  const infos = await Promise.all(masters.map((m) => clusterInfo(m.port)));
  return infos.every((info) => /cluster_state:ok/.test(info));
}

/** Runs pg_ctl as the stack does (as the `postgres` OS user when we are root). */
function pgCtl(args) {
  const bin = findBinaries().postgres;
  if (!bin) throw new Error('pg_ctl not found (set HERALD_PG_BIN)');
  return run(path.join(bin, 'pg_ctl'), args, {
    asUser: isRoot ? process.env.HERALD_PG_OS_USER || 'postgres' : undefined,
    cwd: path.dirname(postgresPaths.data),
    timeoutMs: 60_000,
  });
}

/**
 * What a fault's `inject` is given.
 * @typedef {object} FaultContext
 * @property {ReturnType<typeof import('./driver.mjs').createDriver>} driver
 * @property {import('./requests.mjs').Tenant} tenant
 * @property {import('pg').Pool} db  a pool on herald_events
 *
 * One fault: what it hits, how long it lasts, how it is injected; `prepare` runs before the
 * fault's Tenant is made, `cleanup` after its verdict, failures included.
 * @typedef {object} Fault
 * @property {string} name
 * @property {string} component  what it hits
 * @property {string} title
 * @property {number} holdMs     how long it lasts before recovery starts
 * @property {boolean} [expectFailOpen]  the rate-limit guard may serve without a budget meanwhile:
 *   the table reports how often it did
 * @property {import('./alerts.mjs').AlertMatcher[]} [alerts]  what it must raise in Prometheus
 * @property {boolean} [network]  a connection made slow, cut or reset (network-faults.mjs): the
 *   customer must see no 500 and no request left unanswered past the load's timeout
 * @property {(ctx: FaultContext) => Promise<string>} inject  resolves a note on what exactly
 *   was hit
 * @property {() => Promise<void>} [prepare]
 * @property {() => Promise<void>} [recover]  default: bringBack(component)
 * @property {() => Promise<void>} [cleanup]
 */

/**
 * The faults, in the order the suite runs them.
 * @type {Fault[]}
 */
export const faults = [
  {
    name: 'events-kill',
    component: 'events',
    title: 'kill -9 of the events service while arrays of 1,000 Events are in flight',
    holdMs: 3_000,
    async inject({ driver }) {
      for (let tries = 1; ; tries += 1) {
        let answered = false;
        const big = driver.sendBig(2).finally(() => {
          answered = true;
        });
        // Somewhere inside the request: reading the body, resolving, or writing its batch.
        const minAge = 40 + Math.floor(Math.random() * 160);
        const busy = () => driver.inflight().filter((r) => r.events === 1000 && r.ageMs >= minAge);
        await until(() => busy().length > 0 || answered, 30_000);
        const arrays = busy();
        if (arrays.length > 0 || tries >= 5) {
          const pid = await kill9(servicePid('events'), 'events');
          const oldest = Math.max(0, ...arrays.map((a) => a.ageMs));
          return `events (pid ${pid}) killed with ${arrays.length} array(s) of 1,000 Events in flight for ${oldest} ms`;
        }
        await big; // answered before they were old enough: again
      }
    },
  },
  {
    name: 'relay-kill',
    component: 'events-relay',
    title: `kill -9 of one of the ${RELAYS} events relays while it publishes a batch`,
    // Longer than a relay's lease (3 s) and a heartbeat: the other takes its shards meanwhile.
    holdMs: 5_000,
    async inject({ driver, db }) {
      void driver.sendBig(2, 'by-contact-id');
      // Mid-publish: a relay's transaction is open (rows read, Kafka send under way, rows not
      // yet deleted) while it holds its shards' locks. Best of all just after Kafka took the
      // batch and before the rows are deleted: the batch then goes out a second time.
      const admin = kafkaClient('herald-chaos-fault').admin();
      let moment = 'without catching one mid-publish';
      let caught = null;
      try {
        const end = async () =>
          (await partitionOffsets(admin, [EVENTS_TOPIC])).reduce((n, p) => n + Number(p.high), 0);
        let before = await end();
        const deadline = Date.now() + 5_000;
        while (Date.now() < deadline) {
          const now = await end();
          if (now > before && (caught = await relayInTransaction(db))) {
            moment = 'mid-publish (the topic had just grown, its transaction still open)';
            break;
          }
          before = now;
        }
        if (!caught) {
          const found = await until(async () => (caught = await relayInTransaction(db)), 10_000, 2);
          if (found) moment = 'mid-publish (transaction open)';
        }
      } finally {
        await admin.close().catch(() => {});
      }
      killedRelay = caught?.name ?? 'events-relay';
      const pid = await kill9(caught?.pid ?? servicePid(killedRelay), killedRelay);
      const { rows } = await db.query('select count(*)::int as n from outbox');
      return `${killedRelay} (pid ${pid}) killed ${moment}; ${rows[0].n} message(s) in the outbox`;
    },
    recover: () => bringBack(killedRelay),
  },
  {
    name: 'contacts-kill',
    component: 'contacts',
    title: 'kill -9 of the contacts service',
    holdMs: 3_000,
    async inject({ driver }) {
      await until(() => driver.inflight().some((r) => r.kind.startsWith('upsert')), 3_000);
      const pid = await kill9(servicePid('contacts'), 'contacts');
      return `contacts (pid ${pid}) killed`;
    },
  },
  {
    name: 'postgres-restart',
    component: 'postgres',
    title: 'PostgreSQL stopped -m immediate (no checkpoint: crash recovery), then started',
    holdMs: 3_000,
    async inject() {
      const pid = postgresPid();
      if (!pid) throw new Error('PostgreSQL is not running');
      await pgCtl(['stop', '-D', postgresPaths.data, '-m', 'immediate', '-w', '-t', '60', '-s']);
      return `postgres (postmaster pid ${pid}) stopped with -m immediate`;
    },
  },
  {
    name: 'kafka-kill',
    component: 'kafka',
    title: 'kill -9 of the Kafka broker, then started',
    holdMs: 5_000,
    async inject() {
      const pid = await kill9(kafkaPid(), 'kafka');
      return `kafka (pid ${pid}) killed`;
    },
  },
  {
    name: 'redis-kill',
    component: 'redis',
    title: 'kill -9 of Redis (the node the services use), then started',
    holdMs: 4_000,
    expectFailOpen: true,
    async inject() {
      const redis = redisInstances().find((i) => i.name === 'redis');
      const pid = await kill9(livePid(redis.pidFile, 'redis'), 'redis');
      return `redis (pid ${pid}) killed`;
    },
  },
  {
    name: 'redis-cluster-master',
    component: 'redis',
    title:
      'services on the Redis Cluster; kill -9 of the master holding the key budgets, then started',
    holdMs: 8_000,
    expectFailOpen: true,
    prepare: () => servicesOnCluster(true),
    async inject({ tenant }) {
      const master = await clusterMasterOf(`herald:{${tenant.clientId}}:budget:write`);
      const pid = await kill9(livePid(master.pidFile, 'redis'), master.name);
      return `${master.name} (pid ${pid}, port ${master.port}) killed: it holds the key's budget`;
    },
    async recover() {
      await bringBack('redis');
      if (!(await until(clusterOk, 30_000, 250))) throw new Error('the Redis Cluster is not ok');
    },
    cleanup: () => servicesOnCluster(false),
  },
  {
    name: 'billing-down',
    component: 'billing',
    title: 'billing stopped, then started',
    holdMs: 6_000,
    async inject() {
      const pid = servicePid('billing');
      await down({ only: ['billing'], quiet: true });
      return `billing (pid ${pid}) stopped`;
    },
  },
  {
    name: 'auth-down',
    component: 'auth',
    title: 'auth stopped, then started',
    holdMs: 6_000,
    async inject() {
      const pid = servicePid('auth');
      await down({ only: ['auth'], quiet: true });
      return `auth (pid ${pid}) stopped`;
    },
  },
  ...networkFaults,
];

export const faultNames = faults.map((f) => f.name);

/** What `npm test` runs: every crash fault and a few network faults (SHORT_NETWORK_FAULTS). */
export const testedFaultNames = faults
  .filter((f) => !f.network || SHORT_NETWORK_FAULTS.includes(f.name))
  .map((f) => f.name);

/**
 * Brings the stack back to how the suite found it: the services on their usual Redis, every
 * component running and answering, the relays it started stopped. For an `afterAll`, after a
 * failure too.
 */
export async function restoreStack() {
  await servicesOnCluster(false);
  await linksThroughProxy(false);
  await up({ build: false, quiet: true });
  await stopSuiteRelays();
  if (!(await isUp())) throw new Error('the stack is not up again');
}
