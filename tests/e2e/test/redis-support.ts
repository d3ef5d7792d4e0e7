// The one place the end-to-end tests touch the stack's Redis directly: to take away what a
// flush or a restart would, and watch the system rebuild it.
import { createRedis as connect, waitForRedis, type Redis } from '@herald/redis';
import { subscriptionKey } from '@herald/policy';

export async function createRedis(): Promise<Redis> {
  const redis = connect({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:56379' });
  await waitForRedis(redis);
  return redis;
}

export const subscriptionKeyFor = subscriptionKey;
