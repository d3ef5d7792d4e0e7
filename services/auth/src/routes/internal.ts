import type { Express } from 'express';
import { REVOCATION_LIST_WINDOW_SECONDS, requireServiceToken } from '@herald/auth';
import { errors } from '@herald/errors';
import type { ApiKeysRepository } from '../data/api-keys-repository.js';
import type { TenantsRepository } from '../data/tenants-repository.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** For Herald's other services (never routed by the public ingress). */
export function mountInternalRoutes(
  app: Express,
  deps: { tenants: TenantsRepository; apiKeys: ApiKeysRepository; serviceToken: string },
): void {
  app.use('/internal', requireServiceToken(deps.serviceToken));
  app.get('/internal/v1/tenants/:tenantId', async (req, res) => {
    const { tenantId } = req.params;
    if (!UUID.test(tenantId) || !(await deps.tenants.exists(tenantId)))
      throw errors.notFound('no such tenant');
    res.json({ id: tenantId.toLowerCase() });
  });
  // Every service polls this each second and refuses tokens of the listed keys (decisions
  // D.6). Only keys whose tokens could still be unexpired are listed, so it stays short.
  app.get('/internal/v1/revoked-keys', async (_req, res) => {
    const clientIds = await deps.apiKeys.revokedWithin(REVOCATION_LIST_WINDOW_SECONDS);
    res.set('Cache-Control', 'no-store').json({ clientIds });
  });
}
