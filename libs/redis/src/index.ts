export {
  createRedis,
  redisEnv,
  redisFromConfig,
  taggedKey,
  waitForRedis,
  type Redis,
  type RedisClient,
  type RedisCluster,
  type RedisOptions,
} from './client.js';
export { createRedisGuard, type RedisGuard, type RedisGuardOptions } from './guard.js';
export { defineScript, type RedisScript } from './script.js';
