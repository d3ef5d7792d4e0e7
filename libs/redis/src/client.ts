import { urlList, z } from '@herald/config';
import { meter } from '@herald/telemetry';
import { createClient, createCluster } from 'redis';

export type RedisClient = ReturnType<typeof createClient>;
export type RedisCluster = ReturnType<typeof createCluster>;
/** Single node or cluster: the commands Herald uses work on both. */
export type Redis = RedisClient | RedisCluster;

export interface RedisOptions {
  /** A single node, e.g. redis://127.0.0.1:56379 (local stack). */
  url?: string;
  /** Cluster seed nodes; when given, a cluster client is made. */
  clusterNodes?: readonly string[];
}

const clusters = new WeakSet<Redis>();

/**
 * A Redis client, single node or Cluster, that connects in the background and reconnects
 * with capped backoff forever. Redis is a fast path, never a reason to fail: while it is
 * away, commands reject at once (no offline queue) and callers fall back.
 */
export function createRedis(options: RedisOptions): Redis {
  const socket = {
    connectTimeout: 2_000,
    reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2_000),
  };
  let client: Redis;
  if (options.clusterNodes && options.clusterNodes.length > 0) {
    client = createCluster({
      rootNodes: options.clusterNodes.map((url) => ({ url })),
      defaults: { socket, disableOfflineQueue: true },
    });
    clusters.add(client);
  } else {
    client = createClient({ url: options.url, socket, disableOfflineQueue: true });
  }
  // Without a listener an 'error' event would crash the process. Each one (a refused or lost
  // connection, a failed reconnect) is counted; the calls that fail meanwhile are counted by
  // their guards (redis.failures).
  const clientErrors = meter('herald.redis').createCounter('redis.client.errors', {
    unit: '{error}',
    description: 'Errors of the Redis client connection (refused, lost, failed reconnects)',
  });
  client.on('error', () => clientErrors.add(1));
  void connectWithRetry(client);
  return client;
}

/**
 * A single-node client retries by itself (reconnectStrategy); a Cluster client gives up when
 * no seed node answers its first connect, so that one is retried here with the same backoff.
 */
async function connectWithRetry(client: Redis): Promise<void> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      await client.connect();
      return;
    } catch {
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
    if (Date.now() > deadline) throw new Error(`Redis did not answer within ${timeoutMs} ms`);
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
 * REDIS_CLUSTER_NODES is set, a Cluster (production).
 */
export const redisEnv = {
  REDIS_URL: z.url().default('redis://127.0.0.1:56379'),
  /** Comma-separated seed nodes, e.g. `redis://redis-0:6379,redis://redis-1:6379`. */
  REDIS_CLUSTER_NODES: urlList(),
};

export function redisFromConfig(config: { REDIS_URL: string; REDIS_CLUSTER_NODES: string[] }) {
  return createRedis({ url: config.REDIS_URL, clusterNodes: config.REDIS_CLUSTER_NODES });
}
