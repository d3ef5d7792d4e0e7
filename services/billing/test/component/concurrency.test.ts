// Parallel operator calls on one Tenant count exactly: each change is one row-locked upsert,
// with its own version and its own outbox message.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { subscriptionChangedMessage } from '@herald/messages';
import { startBillingService, type TestBillingService } from '../support.js';

describe('billing under concurrency', () => {
  let svc: TestBillingService;
  beforeAll(async () => {
    svc = await startBillingService({ poolMax: 20 });
  });
  afterAll(() => svc.close());

  async function outboxOf(tenantId: string) {
    const { rows } = await svc.pool.query<{ key: string; value: string }>(
      'select key, value from outbox where key = $1 order by id',
      [tenantId],
    );
    return rows.map((r) => ({
      key: r.key,
      value: subscriptionChangedMessage.parse(JSON.parse(r.value)),
    }));
  }

  it('when 60 failures arrive at once for a new Tenant, then exactly 60 are counted, each once', async () => {
    const tenantId = svc.newTenant();
    const answers = await Promise.all(Array.from({ length: 60 }, () => svc.fail(tenantId)));

    // Every answer saw a different count: no two calls read the same row version.
    const counts = answers.map((a) => a.consecutiveFailures).sort((a, b) => a - b);
    expect(counts).toStrictEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    for (const a of answers) {
      expect(a.state).toBe(a.consecutiveFailures >= 3 ? 'suspended' : 'active');
    }
    expect(await svc.stored(tenantId)).toMatchObject({
      state: 'suspended',
      consecutiveFailures: 60,
      version: 60,
    });

    const messages = await outboxOf(tenantId);
    expect(messages.map((m) => m.value.version)).toStrictEqual(counts);
    expect(messages.every((m) => m.key === tenantId)).toBe(true);
  });

  it('when failures and payment-detail updates race, then the stored count is what the last reset left', async () => {
    const tenantId = svc.newTenant();
    const calls = Array.from({ length: 40 }, (_, i) =>
      i % 10 === 9 ? svc.updateDetails(tenantId) : svc.fail(tenantId),
    );
    await Promise.all(calls);

    // Replay the committed order from the outbox (versions are the commit order of the row lock).
    const messages = await outboxOf(tenantId);
    const stored = await svc.stored(tenantId);
    expect(messages.map((m) => m.value.version)).toStrictEqual(
      Array.from({ length: messages.length }, (_, i) => i + 1),
    );
    let failures = 0;
    let state = 'active';
    for (const { value } of messages) {
      if (value.consecutiveFailures === 0) {
        failures = 0;
        state = 'active';
      } else {
        failures += 1;
        if (failures >= 3) state = 'suspended';
      }
      expect(value).toMatchObject({ consecutiveFailures: failures, state });
    }
    expect(stored).toMatchObject({
      consecutiveFailures: failures,
      state,
      version: messages.length,
    });
    // 36 failures always change the row; a reset only when something was counted.
    expect(messages.filter((m) => m.value.consecutiveFailures > 0)).toHaveLength(36);
  });
});
