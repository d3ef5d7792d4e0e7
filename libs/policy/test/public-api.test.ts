import { describe, expect, it } from '@jest/globals';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRedis } from '@herald/redis';
import { DEFAULT_RATE_BUDGETS, startPublicApi } from '../src/index.js';

const logger = { warn: () => {} };

function config(authUrl: string) {
  return {
    AUTH_JWKS_URL: `${authUrl}/.well-known/jwks.json`,
    AUTH_ISSUER: 'herald-auth',
    AUTH_AUDIENCE: 'herald-api',
    SERVICE_URL_AUTH: authUrl,
    SERVICE_URL_BILLING: 'http://127.0.0.1:9',
    SERVICE_TOKEN: 'service-token-for-public-api-tests',
    RATE_LIMIT_READ_REFILL_PER_SECOND: DEFAULT_RATE_BUDGETS.read.refillPerSecond,
    RATE_LIMIT_READ_BURST: DEFAULT_RATE_BUDGETS.read.burst,
    RATE_LIMIT_WRITE_REFILL_PER_SECOND: DEFAULT_RATE_BUDGETS.write.refillPerSecond,
    RATE_LIMIT_WRITE_BURST: DEFAULT_RATE_BUDGETS.write.burst,
  };
}

describe('startPublicApi', () => {
  it('when auth cannot be reached at start, then the policy is not ready; once the list is fetched, it is', async () => {
    const redis = createRedis({ url: 'redis://127.0.0.1:9' });
    const down = await startPublicApi(config('http://127.0.0.1:9'), { redis, logger });
    await expect(down.policy.ready()).rejects.toThrow(/revocation list/);
    down.stop();

    const auth = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ clientIds: [] }));
    });
    await new Promise<void>((r) => auth.listen(0, '127.0.0.1', r));
    try {
      const port = (auth.address() as AddressInfo).port;
      const up = await startPublicApi(config(`http://127.0.0.1:${port}`), { redis, logger });
      await expect(up.policy.ready()).resolves.toBeUndefined();
      up.stop();
    } finally {
      auth.close();
      await redis.close();
    }
  });
});
