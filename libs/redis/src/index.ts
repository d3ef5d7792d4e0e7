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
  /** Fail a command fast while disconnected instead of queueing it (callers fail open). */
  commandTimeoutMs?: number;
}

/**
 * Connects to Redis, single node or Cluster. Reconnects with capped backoff forever: Redis
 * being away must slow nothing down, so callers treat its errors as "no answer".
 */
export async function connectRedis(options: RedisOptions): Promise<Redis> {
  const socket = {
    connectTimeout: 2_000,
    reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2_000),
  };
  const client: Redis =
    options.clusterNodes && options.clusterNodes.length > 0
      ? createCluster({
          rootNodes: options.clusterNodes.map((url) => ({ url })),
          defaults: { socket, disableOfflineQueue: true },
        })
      : createClient({ url: options.url, socket, disableOfflineQueue: true });
  // Without a listener an 'error' event would crash the process.
  client.on('error', () => {});
  await client.connect();
  return client;
}

/**
 * A key whose `{tag}` part decides its Cluster slot, so every key of one tag (a ClientID,
 * a Tenant) lands on the same node and one script can touch them all.
 */
export function taggedKey(prefix: string, tag: string, ...rest: string[]): string {
  return [prefix, `{${tag}}`, ...rest].join(':');
}
