// The one place the end-to-end tests touch the stack's Redis directly: to take away what a
// flush or a restart would, and watch the system rebuild it.
import { createRedis as connect, waitForRedis, type Redis } from '@herald/redis';
import { subscriptionKey } from '@herald/policy';
import { TEST_REDIS_URL } from '@herald/testing';

export async function createRedis(): Promise<Redis> {
  const redis = connect({ url: TEST_REDIS_URL });
  await waitForRedis(redis);
  return redis;
}

export const subscriptionKeyFor = subscriptionKey;
