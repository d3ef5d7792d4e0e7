import type { Express } from 'express';
import { requireAdminToken, type TenantDirectory } from '@herald/auth';
import type { Pool } from '@herald/db';
import { errors, methodNotAllowed } from '@herald/errors';
import { jsonBody, parseOrThrow } from '@herald/http';
import { isUuid } from '../domain/contacts.js';
import { createOrganization } from '../domain/organizations.js';
import { organizationBody } from '../schemas.js';

/** Operator API (decisions I): organizations. */
export function mountAdminRoutes(
  app: Express,
  deps: { pool: Pool; adminToken: string; tenantExists: TenantDirectory },
): void {
  app
    .route('/admin/v1/tenants/:tenantId/organizations')
    .post(requireAdminToken(deps.adminToken), ...jsonBody(), async (req, res) => {
      const tenantId = req.params.tenantId;
      if (!isUuid(tenantId)) throw errors.notFound('no such tenant');
      const org = await createOrganization(
        deps,
        tenantId,
        parseOrThrow(organizationBody, req.body),
      );
      res.status(201).json({
        externalId: org.externalId,
        name: org.name,
        createdAt: org.createdAt.toISOString(),
      });
    })
    .all(requireAdminToken(deps.adminToken), methodNotAllowed(['POST']));
}
