import type { Express } from 'express';
import { requireServiceToken } from '@herald/auth';
import { errors } from '@herald/errors';
import type { TenantsRepository } from '../data/tenants-repository.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** For Herald's other services (never routed by the public ingress): does a Tenant exist? */
export function mountInternalRoutes(
  app: Express,
  deps: { tenants: TenantsRepository; serviceToken: string },
): void {
  app.use('/internal', requireServiceToken(deps.serviceToken));
  app.get('/internal/v1/tenants/:tenantId', async (req, res) => {
    const { tenantId } = req.params;
    if (!UUID.test(tenantId) || !(await deps.tenants.exists(tenantId)))
      throw errors.notFound('no such tenant');
    res.json({ id: tenantId.toLowerCase() });
  });
}
