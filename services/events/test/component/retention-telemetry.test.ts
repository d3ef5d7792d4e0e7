// Telemetry of the retention sweep: events.retention.deleted counts the Events it deleted,
// events.retention.last_success says when a sweep last completed. Never by Tenant.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataPoint } from '@opentelemetry/sdk-metrics';
import { installTestMetricReader } from '@herald/telemetry/testing';
import { DAY_MS } from '../../src/retention/retention-policy.js';
import { sweepRetention } from '../../src/retention/sweep.js';
import { insertEvents, newEvent, prepareTestDatabase, testPool } from '../contact-data-support.js';

// Registered before the first sweep: it makes its instruments from the provider of that moment.
const reader = installTestMetricReader();

const DATABASE = 'herald_events_test_retention';
const pool = testPool(DATABASE);
beforeAll(() => prepareTestDatabase(DATABASE));
afterAll(() => pool.end());

async function points(name: string) {
  const { resourceMetrics } = await reader.collect();
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const m of scope.metrics) {
      if (m.descriptor.name === name) return m.dataPoints as Array<DataPoint<number>>;
    }
  }
  return undefined;
}

describe('retention sweep telemetry', () => {
  it('when a sweep fails, then nothing says it succeeded; when one deletes Events, then the counter has them and the last success is its time', async () => {
    await expect(
      sweepRetention({ pool, retention: () => Promise.reject(new Error('auth unreachable')) }),
    ).rejects.toThrow();
    expect(await points('events.retention.deleted')).toEqual([
      expect.objectContaining({ attributes: {}, value: 0 }),
    ]);
    expect((await points('events.retention.last_success')) ?? []).toEqual([]);

    const tenantId = randomUUID();
    const old = new Date(Date.now() - 40 * DAY_MS).toISOString();
    await insertEvents(pool, [
      newEvent({ tenantId, receivedAt: old }),
      newEvent({ tenantId, organizationExternalId: 'acme', receivedAt: old }),
    ]);
    const before = Date.now();
    const report = await sweepRetention({
      pool,
      retention: () => Promise.resolve({ defaultDays: 730, tenants: [{ tenantId, days: 30 }] }),
    });

    expect(report.deleted).toBe(2);
    const deleted = await points('events.retention.deleted');
    expect(deleted).toEqual([expect.objectContaining({ attributes: {}, value: 2 })]);
    const [last] = (await points('events.retention.last_success')) ?? [];
    expect(last!.attributes).toEqual({});
    expect(last!.value * 1000).toBeGreaterThanOrEqual(before);
    expect(last!.value * 1000).toBeLessThanOrEqual(Date.now());
  });
});
