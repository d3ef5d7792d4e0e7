// The auth service's metrics: token exchanges by outcome and the argon2 queue, read from an
// in-memory reader registered before the app is built (as the telemetry preload registers the
// SDK's before a service starts).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataPoint } from '@opentelemetry/sdk-metrics';
import { installTestMetricReader } from '@herald/telemetry/testing';
import { errors } from '@herald/errors';
import { boundedHasher, type SecretHasher } from '../../src/domain/secret-hasher.js';
import { exchangeOutcome } from '../../src/domain/token-exchange.js';
import { basic, startAuthService, type TestAuthService } from '../support.js';

const reader = installTestMetricReader();

/** The sum of a metric's data points whose attributes include `attributes`. */
async function value(name: string, attributes: Record<string, string> = {}): Promise<number> {
  const { resourceMetrics } = await reader.collect();
  return resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .filter((m) => m.descriptor.name === name)
    .flatMap((m) => m.dataPoints as Array<DataPoint<number>>)
    .filter((p) => Object.entries(attributes).every(([k, v]) => p.attributes[k] === v))
    .reduce((sum, p) => sum + p.value, 0);
}

let auth: TestAuthService;
beforeAll(async () => {
  auth = await startAuthService();
});
afterAll(() => auth.close());

describe('auth.token.exchanges', () => {
  it('when exchanges succeed and fail, then each is counted by outcome, never by ClientID or Tenant', async () => {
    const tenantId = (await (await auth.admin('/tenants', { name: 'Metrics Co' })).json()).id;
    const key = await (
      await auth.admin(`/tenants/${tenantId}/api-keys`, { kind: 'secret' })
    ).json();
    const issued = await value('auth.token.exchanges', { outcome: 'issued' });
    const invalid = await value('auth.token.exchanges', { outcome: 'invalid_client' });
    const exchange = (authorization: string) =>
      fetch(`${auth.url}/v1/token`, { method: 'POST', headers: { authorization } });

    expect((await exchange(basic(key.clientId, key.secret))).status).toBe(200);
    expect((await exchange(basic(key.clientId, 'wrong'))).status).toBe(401);

    expect(await value('auth.token.exchanges', { outcome: 'issued' })).toBe(issued + 1);
    expect(await value('auth.token.exchanges', { outcome: 'invalid_client' })).toBe(invalid + 1);
    const { resourceMetrics } = await reader.collect();
    const text = JSON.stringify(resourceMetrics.scopeMetrics);
    expect(text).not.toContain(key.clientId);
    expect(text).not.toContain(tenantId);
  });

  it('when an exchange fails, then its outcome comes from the error code', () => {
    expect(exchangeOutcome(errors.invalidClient())).toBe('invalid_client');
    expect(exchangeOutcome(errors.rateLimited(1))).toBe('rate_limited');
    expect(exchangeOutcome(errors.unavailable())).toBe('unavailable');
    expect(exchangeOutcome(new Error('boom'))).toBe('error');
    expect(exchangeOutcome(undefined)).toBe('error');
  });
});

describe('the argon2 queue', () => {
  it('when more hashes are asked for than run at once, then auth.hash.active and auth.hash.queue.depth show them, and 0 once done', async () => {
    const gates: (() => void)[] = [];
    const gated: SecretHasher = {
      hash: () => Promise.resolve('h'),
      verify: () => new Promise<boolean>((resolve) => gates.push(() => resolve(true))),
    };
    const activeBefore = await value('auth.hash.active');
    const bounded = boundedHasher(gated, { concurrency: 2, queue: 3 });
    const pending = Array.from({ length: 5 }, () => bounded.verify('h', 's'));
    await new Promise((r) => setImmediate(r));

    expect(await value('auth.hash.active')).toBe(activeBefore + 2);
    expect(await value('auth.hash.queue.depth')).toBe(3);

    while (gates.length > 0 || (await value('auth.hash.queue.depth')) > 0) {
      gates.shift()?.();
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(pending);
    expect(await value('auth.hash.active')).toBe(activeBefore);
    expect(await value('auth.hash.queue.depth')).toBe(0);
  });
});
