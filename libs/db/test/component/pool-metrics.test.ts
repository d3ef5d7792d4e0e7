import { afterAll, describe, expect, it } from '@jest/globals';
import { metrics } from '@opentelemetry/api';
import { installTestMetricReader } from '@herald/telemetry/testing';
import { createPool, type PoolClient } from '../../src/index.js';

// The pool metrics, read from an in-memory reader registered before the first pool, as the
// telemetry preload registers the SDK's before a service makes its pools. Real PostgreSQL.
const reader = installTestMetricReader();

const url = `${process.env.HERALD_POSTGRES_URL ?? 'postgres://herald@127.0.0.1:55432'}/postgres`;

/** Metric name → value, for the data points of one pool. */
async function poolMetrics(pool: string): Promise<Record<string, number>> {
  const { resourceMetrics } = await reader.collect();
  const values: Record<string, number> = {};
  for (const metric of resourceMetrics.scopeMetrics.flatMap((s) => s.metrics)) {
    for (const point of metric.dataPoints as {
      attributes: Record<string, unknown>;
      value: number;
    }[]) {
      if (point.attributes['db.client.connection.pool.name'] !== pool) continue;
      const state = point.attributes['db.client.connection.state'] as string | undefined;
      values[`${metric.descriptor.name}${state ? `{${state}}` : ''}`] = point.value;
    }
  }
  return values;
}

afterAll(() => metrics.disable());

describe('pool metrics', () => {
  it('when connections are checked out and callers wait, then db.client.connection.* report used, idle, pending and max by pool name; an ended pool reads 0', async () => {
    const pool = createPool({
      connectionString: url,
      applicationName: 'pool-metrics-test',
      max: 2,
    });
    const held: PoolClient[] = [await pool.connect(), await pool.connect()];
    const waiting = pool.connect();
    expect(await poolMetrics('pool-metrics-test')).toEqual({
      'db.client.connection.count{used}': 2,
      'db.client.connection.count{idle}': 0,
      'db.client.connection.max': 2,
      'db.client.connection.pending_requests': 1,
    });

    held.forEach((client) => client.release());
    (await waiting).release();
    expect(await poolMetrics('pool-metrics-test')).toMatchObject({
      'db.client.connection.count{used}': 0,
      'db.client.connection.count{idle}': 2,
      'db.client.connection.pending_requests': 0,
    });

    await pool.end();
    const ended = {
      'db.client.connection.count{used}': 0,
      'db.client.connection.count{idle}': 0,
      'db.client.connection.max': 0,
      'db.client.connection.pending_requests': 0,
    };
    expect(await poolMetrics('pool-metrics-test')).toEqual(ended);
    // forgotten: the values stay as last reported
    expect(await poolMetrics('pool-metrics-test')).toEqual(ended);
  });
});
