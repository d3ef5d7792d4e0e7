// The bounds on Contact exports streaming at once: per Tenant (429) and in all (503), both with
// Retry-After, and the settings that set them. Slowly read exports against them, through the real
// seam: component/export-limits.test.ts.
import { randomUUID } from 'node:crypto';
import { describe, expect, test } from '@jest/globals';
import { loadEventsConfig } from '../../src/config.js';
import { exportSlots } from '../../src/export-erasure/export.js';
import { manifest } from '../../src/manifest.js';

describe('export slots', () => {
  test("when a Tenant has its share, then its next export is 429 with Retry-After; when every slot is taken, then any Tenant's is 503; a release (twice is once) frees one", () => {
    const slots = exportSlots({ maxConcurrent: 3, maxPerTenant: 2 });
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    const releaseA1 = slots.take(a);
    slots.take(a.toUpperCase());
    expect(() => slots.take(a)).toThrow(expect.objectContaining({ status: 429 }));
    try {
      slots.take(a);
    } catch (err) {
      expect(err).toMatchObject({ code: 'rate_limited', headers: { 'Retry-After': '5' } });
    }
    slots.take(b);
    expect(slots.inUse()).toBe(3);
    for (const tenant of [b, c]) {
      expect(() => slots.take(tenant)).toThrow(
        expect.objectContaining({
          status: 503,
          code: 'service_unavailable',
          headers: { 'Retry-After': '5' },
        }),
      );
    }

    releaseA1();
    releaseA1();
    expect(slots.inUse()).toBe(2);
    expect(slots.inUse(a)).toBe(1);
    slots.take(c);
    expect(() => slots.take(c)).toThrow(expect.objectContaining({ status: 503 }));
  });

  test('when the per-Tenant cap is above the overall one, then the overall one bounds a Tenant', () => {
    const slots = exportSlots({ maxConcurrent: 2, maxPerTenant: 5 });
    const tenant = randomUUID();
    slots.take(tenant);
    slots.take(tenant);

    expect(() => slots.take(tenant)).toThrow(expect.objectContaining({ status: 429 }));
  });
});

describe('settings', () => {
  const secrets = {
    ADMIN_TOKEN: 'a'.repeat(32),
    SERVICE_TOKEN: 's'.repeat(32),
    SERVICE_CALLERS: `contacts:${'c'.repeat(32)}`,
  };

  test('when the export settings are unset, then 4 in all and 2 per Tenant; the manifest lists both', () => {
    const config = loadEventsConfig(secrets);

    expect(config).toMatchObject({ EXPORT_MAX_CONCURRENT: 4, EXPORT_MAX_CONCURRENT_PER_TENANT: 2 });
    expect(manifest.processes[0]?.settings).toEqual(
      expect.arrayContaining(['EXPORT_MAX_CONCURRENT', 'EXPORT_MAX_CONCURRENT_PER_TENANT']),
    );
  });

  test.each([
    ['EXPORT_MAX_CONCURRENT', '0'],
    ['EXPORT_MAX_CONCURRENT', 'many'],
    ['EXPORT_MAX_CONCURRENT_PER_TENANT', '0'],
    ['EXPORT_MAX_CONCURRENT_PER_TENANT', '1.5'],
  ])('when %s is %s, then the service refuses to start, naming it', (name, value) => {
    expect(() => loadEventsConfig({ ...secrets, [name]: value })).toThrow(name);
  });
});
