import { describe, expect, it } from '@jest/globals';
import { createLogger, routeTableAgreement } from '@herald/http';
import { createApp, type AuthAppDeps } from '../../src/app.js';
import { manifest } from '../../src/manifest.js';

describe('the route table', () => {
  it('when the app is built, then it mounts exactly the documented and the internal routes', async () => {
    const app = await createApp({
      pool: {},
      logger: createLogger({ service: 'test', level: 'silent' }),
      signer: { jwks: { keys: [] } },
      hasher: { hash: () => Promise.resolve('hash'), verify: () => Promise.resolve(false) },
      adminToken: 'a'.repeat(32),
      serviceToken: 's'.repeat(32),
      exchangeGuard: {},
    } as unknown as AuthAppDeps);
    const { mounted, expected } = routeTableAgreement(app, manifest.routes);
    expect(mounted).toEqual(expected);
  });
});
