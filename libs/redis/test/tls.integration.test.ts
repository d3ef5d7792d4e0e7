// Redis over TLS with an ACL user, as managed offerings serve it, single node and Cluster: two
// throwaway redis-server processes with a TLS port only (a certificate for localhost and
// 127.0.0.1 from a CA made here), the default user off and one user with a password; the second
// is a one-node Cluster holding every slot, so the client discovers it through CLUSTER SLOTS and
// connects to it again with its defaults alone.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import {
  createTestPki,
  freePort,
  startProcess,
  stopProcess,
  tempDir,
  waitFor,
  type TestPki,
  type TestProcess,
} from '@herald/jest-preset/throwaway';
import { createClient } from 'redis';
import {
  defineScript,
  redisFromConfig,
  taggedKey,
  waitForRedis,
  type Redis,
  type RedisConfig,
} from '../src/index.js';

const USER = 'herald';
const PASSWORD = 'tls-test-password';

function redisServer(): string {
  for (const dir of ['/usr/bin', '/usr/sbin', '/usr/local/bin', '/usr/local/sbin']) {
    const file = path.join(dir, 'redis-server');
    if (fs.existsSync(file)) return file;
  }
  throw new Error('no redis-server: install Debian’s redis-server package');
}

let dir: string;
let pki: TestPki;
let singlePort: number;
let clusterPort: number;
const servers: TestProcess[] = [];
const clients: Redis[] = [];

function startRedis(name: string, port: number, extra: string[]): TestProcess {
  const home = path.join(dir, name);
  fs.mkdirSync(home);
  const conf = path.join(home, 'redis.conf');
  fs.writeFileSync(
    conf,
    [
      'port 0',
      `tls-port ${port}`,
      'bind 127.0.0.1',
      `tls-cert-file ${pki.serverCert}`,
      `tls-key-file ${pki.serverKey}`,
      `tls-ca-cert-file ${pki.caFile}`,
      'tls-auth-clients no',
      'save ""',
      'appendonly no',
      `dir ${home}`,
      'user default off',
      `user ${USER} on >${PASSWORD} ~* &* +@all`,
      ...extra,
      '',
    ].join('\n'),
  );
  const server = startProcess({
    command: redisServer(),
    args: [conf],
    cwd: home,
    logFile: path.join(home, 'redis.log'),
  });
  servers.push(server);
  return server;
}

/** A TLS handshake with the test CA succeeds. */
function tlsAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, ca: fs.readFileSync(pki.caFile) }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function client(
  config: Partial<RedisConfig>,
  logger?: { warn(obj: object, msg: string): void },
): Redis {
  const made = redisFromConfig(
    { REDIS_URL: 'redis://127.0.0.1:9', REDIS_CLUSTER_NODES: [], ...config },
    logger ? { logger } : {},
  );
  clients.push(made);
  return made;
}

beforeAll(async () => {
  dir = tempDir('redis-tls');
  pki = await createTestPki(dir);
  [singlePort, clusterPort] = await Promise.all([freePort(), freePort()]);
  const busPort = await freePort();
  const single = startRedis('single', singlePort, []);
  const cluster = startRedis('cluster', clusterPort, [
    'cluster-enabled yes',
    'cluster-config-file nodes.conf',
    `cluster-port ${busPort}`,
    'tls-cluster yes',
  ]);
  await Promise.all([
    waitFor(() => tlsAnswers(singlePort), { what: 'the TLS Redis', child: single }),
    waitFor(() => tlsAnswers(clusterPort), { what: 'the TLS Redis Cluster node', child: cluster }),
  ]);
  // One node holding every slot is a whole Cluster.
  const admin = createClient({
    socket: { host: '127.0.0.1', port: clusterPort, tls: true, ca: fs.readFileSync(pki.caFile) },
    username: USER,
    password: PASSWORD,
  });
  await admin.connect();
  try {
    await admin.sendCommand(['CLUSTER', 'ADDSLOTSRANGE', '0', '16383']);
    await waitFor(
      async () => /cluster_state:ok/.test(await admin.sendCommand<string>(['CLUSTER', 'INFO'])),
      { what: 'the one-node Cluster to be ok', child: cluster },
    );
  } finally {
    admin.destroy();
  }
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.destroy();
  // A destroyed client that was failing ends its reconnect loop only after the pending delay
  // (at most 2 s, createRedis's cap): let it, so no timer outlives the test.
  await new Promise((resolve) => setTimeout(resolve, 2_100));
  await Promise.all(servers.map((s) => stopProcess(s)));
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}, 30_000);

const increment = defineScript("return redis.call('INCRBY', KEYS[1], ARGV[1])");

async function roundTrip(redis: Redis): Promise<void> {
  await waitForRedis(redis);
  const key = taggedKey('tls-test', `${process.pid}`, 'counter');
  await redis.set(key, '40');
  expect(await increment.run(redis, [key], [2])).toBe(42);
}

describe('Redis with TLS and an ACL user', () => {
  it('when the URL is rediss:// and the CA and user are set, then a single node answers', async () => {
    await roundTrip(
      client({
        REDIS_URL: `rediss://127.0.0.1:${singlePort}`,
        REDIS_CA_FILE: pki.caFile,
        REDIS_USERNAME: USER,
        REDIS_PASSWORD: PASSWORD,
      }),
    );
  });

  it('when REDIS_TLS=true turns TLS on and the URL carries the user, then it answers by host name', async () => {
    await roundTrip(
      client({
        REDIS_URL: `redis://${USER}:${PASSWORD}@localhost:${singlePort}`,
        REDIS_TLS: true,
        REDIS_CA_FILE: pki.caFile,
      }),
    );
  });

  it('when the Cluster client is given the CA and user, then the nodes it discovers are reached with them', async () => {
    await roundTrip(
      client({
        REDIS_CLUSTER_NODES: [`rediss://127.0.0.1:${clusterPort}`],
        REDIS_CA_FILE: pki.caFile,
        REDIS_USERNAME: USER,
        REDIS_PASSWORD: PASSWORD,
      }),
    );
  });

  it('when the credentials are in the Cluster seed URL, then the discovered nodes get them too', async () => {
    await roundTrip(
      client({
        REDIS_CLUSTER_NODES: [`rediss://${USER}:${PASSWORD}@127.0.0.1:${clusterPort}`],
        REDIS_CA_FILE: pki.caFile,
      }),
    );
  });

  it('when the password is wrong, then Redis refuses it and the failure says WRONGPASS, never the password', async () => {
    const lines: unknown[] = [];
    const logger = { warn: (obj: object, msg: string) => lines.push({ obj, msg }) };
    const wrong = client(
      {
        REDIS_URL: `rediss://127.0.0.1:${singlePort}`,
        REDIS_CA_FILE: pki.caFile,
        REDIS_USERNAME: USER,
        REDIS_PASSWORD: 'not-the-password',
      },
      logger,
    );
    await expect(waitForRedis(wrong, 2_000)).rejects.toThrow(/last failure: WRONGPASS/);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      obj: { reason: 'WRONGPASS' },
      msg: expect.stringContaining('Redis connection failed (WRONGPASS)'),
    });
    expect(JSON.stringify(lines)).not.toContain('not-the-password');
  });

  it('when the Cluster password is wrong, then the Cluster client fails the same way', async () => {
    const wrong = client({
      REDIS_CLUSTER_NODES: [`rediss://127.0.0.1:${clusterPort}`],
      REDIS_CA_FILE: pki.caFile,
      REDIS_USERNAME: USER,
      REDIS_PASSWORD: 'not-the-password',
    });
    await expect(waitForRedis(wrong, 2_000)).rejects.toThrow(/last failure: WRONGPASS/);
  });

  it('when the CA is another one, then the server’s certificate is refused', async () => {
    const wrong = client({
      REDIS_URL: `rediss://127.0.0.1:${singlePort}`,
      REDIS_CA_FILE: pki.otherCaFile,
      REDIS_USERNAME: USER,
      REDIS_PASSWORD: PASSWORD,
    });
    await expect(waitForRedis(wrong, 2_000)).rejects.toThrow(
      /last failure: (SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)/,
    );
  });
});
