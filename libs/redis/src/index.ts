export {
  createRedis,
  redisEnv,
  redisFailureReason,
  redisFromConfig,
  redisOptionsFromConfig,
  taggedKey,
  waitForRedis,
  type Redis,
  type RedisClient,
  type RedisCluster,
  type RedisConfig,
  type RedisOptions,
} from './client.js';
export { createRedisGuard, type RedisGuard, type RedisGuardOptions } from './guard.js';
export { defineScript, type RedisScript } from './script.js';
