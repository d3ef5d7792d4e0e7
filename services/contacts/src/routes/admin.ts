import type { TenantDirectory } from '@herald/auth';
import type { Pool } from '@herald/db';
import { errors } from '@herald/errors';
import { parseOrThrow, type RouteHandlers } from '@herald/http';
import { isUuid } from '../domain/contacts.js';
import { createOrganization } from '../domain/organizations.js';
import { organizationBody } from '../schemas.js';
import type { manifest } from '../manifest.js';

/** Operator API: organizations. */
export function adminHandlers(deps: {
  pool: Pool;
  tenantExists: TenantDirectory;
}): Pick<RouteHandlers<typeof manifest.routes>, 'createOrganization'> {
  return {
    createOrganization: async (req, res) => {
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
    },
  };
}
