// kafka.client.errors: every failure the client reports is counted by the part that failed. A
// client whose only broker is a closed port, and an in-memory reader registered before it is made.
import { describe, expect, it } from '@jest/globals';
import net from 'node:net';
import type { DataPoint } from '@opentelemetry/sdk-metrics';
import { installTestMetricReader } from '@herald/telemetry/testing';
import { createKafka } from '../../src/index.js';

const reader = installTestMetricReader();

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('kafka.client.errors', () => {
  it('when no broker answers, then the failures are counted by namespace, and still reach the logger', async () => {
    const logged: string[] = [];
    const kafka = createKafka({
      brokers: [`127.0.0.1:${await closedPort()}`],
      clientId: 'client-errors-test',
      retries: 0,
      logger: {
        error: (_obj, msg) => logged.push(msg ?? ''),
        warn: () => {},
        info: () => {},
        debug: () => {},
      },
    });
    const admin = kafka.admin();
    await expect(admin.listTopics()).rejects.toThrow();
    await admin.close();

    const { resourceMetrics } = await reader.collect();
    const points = resourceMetrics.scopeMetrics
      .flatMap((s) => s.metrics)
      .filter((m) => m.descriptor.name === 'kafka.client.errors')
      .flatMap((m) => m.dataPoints as Array<DataPoint<number>>);
    const byNamespace = Object.fromEntries(
      points.map((p) => [String(p.attributes.namespace), p.value]),
    );
    expect(byNamespace.Connection).toBeGreaterThan(0);
    expect(points.reduce((sum, p) => sum + p.value, 0)).toBe(logged.length);
    for (const point of points) {
      expect(Object.keys(point.attributes)).toEqual(['namespace']);
      expect(point.attributes.namespace).toMatch(/^[A-Za-z]+$/);
    }
  });
});
