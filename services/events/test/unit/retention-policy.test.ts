// Which Tenants the retention sweep cleans, and to when, from the settings the auth service gives.
import { describe, expect, it } from '@jest/globals';
import {
  longestRetentionDays,
  retentionCutoff,
  sweepPlan,
} from '../../src/retention/retention-policy.js';

const A = '0b9d6f0e-95b5-4d3e-9a55-1f7f3c0a0001';
const B = '0b9d6f0e-95b5-4d3e-9a55-1f7f3c0a0002';
const C = '0b9d6f0e-95b5-4d3e-9a55-1f7f3c0a0003';

describe('longestRetentionDays', () => {
  it('when no Tenant has a retention of its own, then it is the default', () => {
    expect(longestRetentionDays({ defaultDays: 730, tenants: [] })).toBe(730);
  });

  it('when a Tenant keeps Events longer than the default, then it is that Tenant’s', () => {
    expect(
      longestRetentionDays({
        defaultDays: 730,
        tenants: [
          { tenantId: A, days: 30 },
          { tenantId: B, days: 3650 },
        ],
      }),
    ).toBe(3650);
  });

  it('when every Tenant of its own keeps Events shorter, then it is the default', () => {
    expect(longestRetentionDays({ defaultDays: 90, tenants: [{ tenantId: A, days: 30 }] })).toBe(
      90,
    );
  });
});

describe('sweepPlan', () => {
  it('when the default is the longest, then only the shorter Tenants of their own are swept and the default ones are left to partition drops', () => {
    const plan = sweepPlan({
      defaultDays: 730,
      tenants: [
        { tenantId: A, days: 30 },
        { tenantId: B, days: 365 },
      ],
    });
    expect(plan).toEqual({
      longestDays: 730,
      shorter: [
        { tenantId: A, days: 30 },
        { tenantId: B, days: 365 },
      ],
      defaultDays: undefined,
      ownRetention: new Set([A, B]),
    });
  });

  it('when a Tenant keeps Events longer than the default, then the Tenants at the default are swept to it, and the longest Tenant is not', () => {
    const plan = sweepPlan({
      defaultDays: 90,
      tenants: [
        { tenantId: A, days: 30 },
        { tenantId: B, days: 3650 },
        { tenantId: C, days: 3650 },
      ],
    });
    expect(plan.longestDays).toBe(3650);
    expect(plan.shorter).toEqual([{ tenantId: A, days: 30 }]);
    expect(plan.defaultDays).toBe(90);
    // B and C keep their own: never swept to the default, though they are not in `shorter`.
    expect([...plan.ownRetention].sort()).toEqual([A, B, C]);
  });

  it('when a Tenant’s own retention is longer than the default but not the longest, then it is swept to its own, not to the default', () => {
    const plan = sweepPlan({
      defaultDays: 30,
      tenants: [
        { tenantId: A, days: 365 },
        { tenantId: B, days: 730 },
      ],
    });
    expect(plan.shorter).toEqual([{ tenantId: A, days: 365 }]);
    expect(plan.defaultDays).toBe(30);
    expect(plan.ownRetention.has(A)).toBe(true);
  });

  it('when a Tenant id comes in capitals, then it is still known as one with its own retention', () => {
    const plan = sweepPlan({ defaultDays: 30, tenants: [{ tenantId: A.toUpperCase(), days: 90 }] });
    expect(plan.ownRetention.has(A)).toBe(true);
  });
});

describe('retentionCutoff', () => {
  it('when counted back, then a day is 24 hours whatever the calendar (no daylight saving shift)', () => {
    expect(retentionCutoff(new Date('2026-03-30T12:00:00.000Z'), 30).toISOString()).toBe(
      '2026-02-28T12:00:00.000Z',
    );
    expect(retentionCutoff(new Date('2026-11-02T00:30:00.000Z'), 1).toISOString()).toBe(
      '2026-11-01T00:30:00.000Z',
    );
  });
});
