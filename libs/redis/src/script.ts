import { createHash } from 'node:crypto';
import type { Redis } from './client.js';

/** A Lua script run by its SHA1, loaded on first use and again after a server restart. */
export interface RedisScript {
  run(redis: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
}

/**
 * Scripts run with EVALSHA so the body crosses the wire once per server; a NOSCRIPT answer
 * (new or restarted node, failover, flushed script cache) falls back to EVAL, which loads it.
 * On a Cluster every key of one call must share a hash tag (see taggedKey).
 */
export function defineScript(source: string): RedisScript {
  const sha = createHash('sha1').update(source).digest('hex');
  return {
    async run(redis, keys, args) {
      const options = { keys: [...keys], arguments: args.map(String) };
      try {
        return await redis.evalSha(sha, options);
      } catch (err) {
        if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
        return redis.eval(source, options);
      }
    },
  };
}
