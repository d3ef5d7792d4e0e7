// redis.client.errors: each error event of the client's connection (refused, lost, failed
// reconnect) is counted. A client aimed at a closed port, and an in-memory reader registered
// before it is made.
import { describe, expect, it } from '@jest/globals';
import net from 'node:net';
import type { DataPoint } from '@opentelemetry/sdk-metrics';
import { installTestMetricReader } from '@herald/telemetry/testing';
import { createRedis } from '../src/index.js';

const reader = installTestMetricReader();

async function errors(): Promise<number> {
  const { resourceMetrics } = await reader.collect();
  return resourceMetrics.scopeMetrics
    .flatMap((s) => s.metrics)
    .filter((m) => m.descriptor.name === 'redis.client.errors')
    .flatMap((m) => m.dataPoints as Array<DataPoint<number>>)
    .reduce((sum, p) => sum + p.value, 0);
}

describe('redis.client.errors', () => {
  it('when Redis refuses the connection, then each failed attempt is counted', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    await new Promise((resolve) => server.close(resolve));

    const redis = createRedis({ url: `redis://127.0.0.1:${port}` });
    try {
      const deadline = Date.now() + 5_000;
      while ((await errors()) < 2 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await errors()).toBeGreaterThanOrEqual(2);
    } finally {
      redis.destroy();
    }
  });
});
