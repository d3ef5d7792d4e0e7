import { caFile, ConfigError, flag, readCaFile, urlList, z } from '@herald/config';
import { meter } from '@herald/telemetry';
import { createClient, createCluster, type RedisClientOptions } from 'redis';

export type RedisClient = ReturnType<typeof createClient>;
export type RedisCluster = ReturnType<typeof createCluster>;
/** Single node or cluster: the commands Herald uses work on both. */
export type Redis = RedisClient | RedisCluster;

/** The logger calls the client makes (pino's shape). */
interface WarnLogger {
  warn(obj: object, msg: string): void;
}

export interface RedisOptions {
  /** A single node, e.g. redis://127.0.0.1:56379 (local stack); rediss:// for TLS. */
  url?: string;
  /** Cluster seed nodes; when given, a cluster client is made. */
  clusterNodes?: readonly string[];
  /**
   * TLS to every node, its certificate verified (name and chain) against `ca`, a PEM bundle, or
   * Node's trusted CAs. rediss:// URLs turn it on too.
   */
  tls?: boolean | { ca?: string };
  /** An ACL user and its password; they take the place of credentials in the URLs. */
  username?: string;
  password?: string;
  /** Told of connection failures (a refused password, an unverified certificate), rarely. */
  logger?: WarnLogger;
}

/** A node's address and what its URL says about TLS and credentials. */
interface RedisEndpoint {
  host: string;
  port: number;
  tls: boolean;
  username?: string;
  password?: string;
  database?: number;
}

function parseRedisUrl(raw: string): RedisEndpoint {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // Node's own error would carry the URL, password included.
    throw new TypeError('not a URL');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new TypeError('a Redis URL starts with redis:// or rediss://');
  }
  const database = url.pathname.length > 1 ? Number(url.pathname.slice(1)) : undefined;
  return {
    host: url.hostname.replace(/^\[(.+)\]$/, '$1'),
    port: url.port ? Number(url.port) : 6379,
    tls: url.protocol === 'rediss:',
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(database === undefined || Number.isNaN(database) ? {} : { database }),
  };
}

const clusters = new WeakSet<Redis>();
/** Each client's latest connection failure, for waitForRedis's answer. */
const lastFailures = new WeakMap<Redis, unknown>();
const FAILURE_LOG_INTERVAL_MS = 60_000;

/**
 * What a connection failure was, without any data: a socket or TLS error's code (such as
 * SELF_SIGNED_CERT_IN_CHAIN or ERR_TLS_CERT_ALTNAME_INVALID), or the error word a Redis answer
 * begins with (WRONGPASS, NOAUTH, NOPERM).
 */
export function redisFailureReason(err: unknown): string {
  const fields = (typeof err === 'object' && err !== null ? err : {}) as Record<string, unknown>;
  if (typeof fields.code === 'string') return fields.code;
  const word = typeof fields.message === 'string' ? /^[A-Z][A-Z_]+\b/.exec(fields.message) : null;
  if (word) return word[0];
  return typeof fields.name === 'string' ? fields.name : 'unknown';
}

/**
 * A Redis client, single node or Cluster, that connects in the background and reconnects
 * with capped backoff forever. Redis is a fast path, never a reason to fail: while it is
 * away, commands reject at once (no offline queue) and callers fall back.
 */
export function createRedis(options: RedisOptions): Redis {
  const seeds = (options.clusterNodes ?? []).map(parseRedisUrl);
  const single = options.url === undefined ? undefined : parseRedisUrl(options.url);
  const endpoints = seeds.length > 0 ? seeds : single ? [single] : [];
  const useTls = Boolean(options.tls) || endpoints.some((e) => e.tls);
  const ca = typeof options.tls === 'object' ? options.tls.ca : undefined;
  // A Cluster client opens a connection to every node it discovers with `defaults` alone, so
  // the seeds' credentials and TLS go there rather than on the seeds.
  const fromUrl = endpoints.find((e) => e.username !== undefined || e.password !== undefined);
  const credentials =
    options.username !== undefined || options.password !== undefined
      ? { username: options.username, password: options.password }
      : { username: fromUrl?.username, password: fromUrl?.password };
  const socket = {
    connectTimeout: 2_000,
    reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2_000),
    ...(useTls ? { tls: true as const, rejectUnauthorized: true, ...(ca ? { ca } : {}) } : {}),
  };
  const shared: RedisClientOptions = {
    socket,
    disableOfflineQueue: true,
    ...(credentials.username === undefined ? {} : { username: credentials.username }),
    ...(credentials.password === undefined ? {} : { password: credentials.password }),
  };
  let client: Redis;
  if (seeds.length > 0) {
    client = createCluster({
      rootNodes: seeds.map((e) => ({ socket: { host: e.host, port: e.port } })),
      defaults: shared,
    });
    clusters.add(client);
  } else {
    client = createClient({
      ...shared,
      socket: { ...socket, ...(single ? { host: single.host, port: single.port } : {}) },
      ...(single?.database === undefined ? {} : { database: single.database }),
    });
  }
  // Without a listener an 'error' event would crash the process. Each one (a refused or lost
  // connection, a failed reconnect) is counted; the calls that fail meanwhile are counted by
  // their guards (redis.failures).
  const clientErrors = meter('herald.redis').createCounter('redis.client.errors', {
    unit: '{error}',
    description: 'Errors of the Redis client connection (refused, lost, failed reconnects)',
  });
  clientErrors.add(0); // there from the start: a rate over it reads 0, not nothing
  const failed = failureReporter(client, options.logger);
  client.on('error', (err: unknown) => {
    clientErrors.add(1);
    failed(err);
  });
  // A Cluster client reports the failures of the nodes it discovered as 'node-error'.
  if (seeds.length > 0) client.on('node-error', (err: unknown) => failed(err));
  void connectWithRetry(client);
  return client;
}

/** Remembers a client's latest failure and logs one at most once a minute. */
function failureReporter(client: Redis, logger: WarnLogger | undefined): (err: unknown) => void {
  let loggedAt = -Infinity;
  return (err) => {
    lastFailures.set(client, err);
    if (!logger || performance.now() - loggedAt < FAILURE_LOG_INTERVAL_MS) return;
    loggedAt = performance.now();
    const reason = redisFailureReason(err);
    logger.warn(
      { err, reason },
      `Redis connection failed (${reason}); retrying (logged at most once a minute)`,
    );
  };
}

/**
 * A single-node client retries by itself (reconnectStrategy); a Cluster client gives up when
 * no seed node answers its first connect, so that one is retried here with the same backoff.
 */
async function connectWithRetry(client: Redis): Promise<void> {
  // Its owner closed or destroyed it (a Cluster client says so with 'disconnect'): a retry
  // would open it again.
  let closed = false;
  if (clusters.has(client)) client.once('disconnect', () => (closed = true));
  for (let attempt = 0; !closed; attempt += 1) {
    try {
      await client.connect();
      return;
    } catch {
      // Why it failed was an 'error' event already (each seed's own failure).
      if (!clusters.has(client) || client.isOpen) return;
      // unref: a pending retry never keeps a shutting-down process alive.
      await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** attempt, 2_000)).unref());
    }
  }
}

function isConnected(client: Redis): boolean {
  // A Cluster client has no isReady; it is open once the slot map is loaded.
  return clusters.has(client) ? client.isOpen : (client as RedisClient).isReady;
}

/** Resolves once the client answers PING, or rejects after `timeoutMs`. */
export async function waitForRedis(client: Redis, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (isConnected(client)) {
        // A keyed read works the same on a single node and on a Cluster.
        await client.get(taggedKey('herald', 'health', 'ping'));
        return;
      }
    } catch {
      // not yet
    }
    if (Date.now() > deadline) {
      const failure = lastFailures.get(client);
      const why = failure === undefined ? '' : ` (last failure: ${redisFailureReason(failure)})`;
      throw new Error(`Redis did not answer within ${timeoutMs} ms${why}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A key whose `{tag}` part decides its Cluster slot, so every key of one tag (a ClientID,
 * a Tenant) lands on the same node and one script can touch them all.
 */
export function taggedKey(prefix: string, tag: string, ...rest: string[]): string {
  return [prefix, `{${tag}}`, ...rest].join(':');
}

/**
 * The variables of every service that uses Redis: one node (local stack) or, when
 * REDIS_CLUSTER_NODES is set, a Cluster (production); TLS and an ACL user for managed ones.
 */
export const redisEnv = {
  REDIS_URL: z
    .url()
    .default('redis://127.0.0.1:56379')
    .describe(
      'single-node Redis: rate budgets, the exchange guard, the subscription mirror, the dedup fast path; unused when `REDIS_CLUSTER_NODES` is set',
    ),
  REDIS_CLUSTER_NODES: urlList().describe(
    'comma-separated Redis Cluster seed nodes, e.g. `redis://redis-0:6379,redis://redis-1:6379`; when set, used instead of `REDIS_URL`',
  ),
  REDIS_TLS: flag().describe(
    'TLS to every node (`true` or `false`); unset: TLS exactly when the URLs are `rediss://`',
  ),
  REDIS_CA_FILE: caFile().describe(
    "the CA bundle (PEM) the nodes' certificates must chain to; unset: Node's trusted CAs",
  ),
  REDIS_USERNAME: z
    .string()
    .min(1)
    .optional()
    .describe('an ACL user (`AUTH username password`); unset with a password: the default user'),
  REDIS_PASSWORD: z
    .string()
    .min(1)
    .optional()
    .describe('its password, a secret; or put the credentials in the URLs, not both'),
};

export interface RedisConfig {
  REDIS_URL: string;
  REDIS_CLUSTER_NODES: string[];
  REDIS_TLS?: boolean | undefined;
  REDIS_CA_FILE?: string | undefined;
  REDIS_USERNAME?: string | undefined;
  REDIS_PASSWORD?: string | undefined;
}

/**
 * The client options of a process's variables, checked together: a ConfigError names what does
 * not fit, never quoting a URL or a password.
 */
export function redisOptionsFromConfig(config: RedisConfig): RedisOptions {
  const cluster = config.REDIS_CLUSTER_NODES.length > 0;
  const variable = cluster ? 'REDIS_CLUSTER_NODES' : 'REDIS_URL';
  const problems: string[] = [];
  const endpoints: RedisEndpoint[] = [];
  for (const url of cluster ? config.REDIS_CLUSTER_NODES : [config.REDIS_URL]) {
    try {
      endpoints.push(parseRedisUrl(url));
    } catch (err) {
      problems.push(`${variable}: ${(err as Error).message}`);
    }
  }
  const secure = endpoints.filter((e) => e.tls).length;
  if (secure > 0 && secure < endpoints.length) {
    problems.push(`${variable}: mixes redis:// and rediss://; TLS is for every node or none`);
  }
  if (config.REDIS_TLS === false && secure > 0) {
    problems.push(`REDIS_TLS is false, but ${variable} uses rediss://`);
  }
  const tls = config.REDIS_TLS === true || secure > 0;
  if (config.REDIS_CA_FILE !== undefined && !tls) {
    problems.push(
      `REDIS_CA_FILE is set but TLS is off: set REDIS_TLS=true or use rediss:// in ${variable}`,
    );
  }
  if (config.REDIS_USERNAME !== undefined && config.REDIS_PASSWORD === undefined) {
    problems.push('REDIS_USERNAME is set without REDIS_PASSWORD');
  }
  const inUrls = endpoints.filter((e) => e.username !== undefined || e.password !== undefined);
  if (inUrls.length > 0 && (config.REDIS_USERNAME ?? config.REDIS_PASSWORD) !== undefined) {
    problems.push(
      `${variable} carries credentials and REDIS_USERNAME/REDIS_PASSWORD are set: set them one way`,
    );
  }
  const distinct = new Set(inUrls.map((e) => `${e.username ?? ''}\n${e.password ?? ''}`));
  if (distinct.size > 1) {
    problems.push(`${variable}: the nodes carry different credentials; one user serves them all`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  let ca: string | undefined;
  if (config.REDIS_CA_FILE !== undefined) ca = readCaFile(config.REDIS_CA_FILE);
  return {
    url: config.REDIS_URL,
    clusterNodes: config.REDIS_CLUSTER_NODES,
    ...(tls ? { tls: ca ? { ca } : true } : {}),
    ...(config.REDIS_USERNAME === undefined ? {} : { username: config.REDIS_USERNAME }),
    ...(config.REDIS_PASSWORD === undefined ? {} : { password: config.REDIS_PASSWORD }),
  };
}

/** The client of a process's variables (redisEnv); connection failures go to `logger`. */
export function redisFromConfig(config: RedisConfig, deps: { logger?: WarnLogger } = {}) {
  return createRedis({ ...redisOptionsFromConfig(config), ...deps });
}
