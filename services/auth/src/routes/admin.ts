import type { Express } from 'express';
import { requireAdminToken } from '@herald/auth';
import { errors, methodNotAllowed } from '@herald/errors';
import { jsonBody, parseOrThrow } from '@herald/http';
import { createApiKey, revokeApiKey, type ApiKeyDeps } from '../domain/api-keys.js';
import { createTenant } from '../domain/tenants.js';
import {
  createApiKeyBody,
  createTenantBody,
  uuidParam,
  type ApiKeyResponse,
  type TenantResponse,
} from '../schemas.js';

/** A malformed tenant id names no tenant: 404, as for an unknown one. */
function tenantIdOf(raw: string | undefined): string {
  const parsed = uuidParam.safeParse(raw);
  if (!parsed.success) throw errors.notFound('no such tenant');
  return parsed.data;
}

/** Operator API (decisions I): tenants and API keys. */
export function mountAdminRoutes(app: Express, deps: ApiKeyDeps & { adminToken: string }): void {
  app.use('/admin/v1', requireAdminToken(deps.adminToken));

  app
    .route('/admin/v1/tenants')
    .post(...jsonBody(), async (req, res) => {
      const tenant = await createTenant(deps.tenants, parseOrThrow(createTenantBody, req.body));
      const body: TenantResponse = {
        id: tenant.id,
        name: tenant.name,
        createdAt: tenant.createdAt.toISOString(),
      };
      res.status(201).json(body);
    })
    .all(methodNotAllowed(['POST']));

  app
    .route('/admin/v1/tenants/:tenantId/api-keys')
    .post(...jsonBody(), async (req, res) => {
      const tenantId = tenantIdOf(req.params.tenantId);
      const key = await createApiKey(deps, {
        tenantId,
        ...parseOrThrow(createApiKeyBody, req.body),
      });
      const body: ApiKeyResponse = { ...key, createdAt: key.createdAt.toISOString() };
      res.status(201).set('Cache-Control', 'no-store').json(body);
    })
    .all(methodNotAllowed(['POST']));

  app
    .route('/admin/v1/tenants/:tenantId/api-keys/:clientId/revoke')
    .post(async (req, res) => {
      await revokeApiKey(deps, tenantIdOf(req.params.tenantId), req.params.clientId);
      res.status(204).end();
    })
    .all(methodNotAllowed(['POST']));
}
