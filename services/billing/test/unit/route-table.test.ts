import { describe, expect, it } from '@jest/globals';
import { createLogger, routeTableAgreement } from '@herald/http';
import { createApp, type BillingAppDeps } from '../../src/app.js';
import { manifest } from '../../src/manifest.js';

describe('the route table', () => {
  it('when the app is built, then it mounts exactly the documented and the internal routes', () => {
    const app = createApp({
      pool: {},
      logger: createLogger({ service: 'test', level: 'silent' }),
      mirror: {},
      suspendAfterFailures: 3,
      adminToken: 'a'.repeat(32),
      serviceToken: 's'.repeat(32),
      tenantExists: () => Promise.resolve(true),
    } as unknown as BillingAppDeps);
    const { mounted, expected } = routeTableAgreement(app, manifest.routes);
    expect(mounted).toEqual(expected);
  });
});
