import type { Pool } from '@herald/db';
import { errors } from '@herald/errors';
import { uuidParam, type RouteHandlers } from '@herald/http';
import {
  requestTenantDeletion,
  tenantRowExists,
  type TenantDeleter,
} from '../domain/tenant-deletion.js';
import type { TenantDeletionResponse } from '../schemas.js';
import type { manifest } from '../manifest.js';

/**
 * The typed confirmation: `confirm` must repeat the Tenant's id (docs/decisions.md). A flag such
 * as `confirm=true` is pasted along with any command; the id makes the caller name the Tenant
 * twice, so a wrong variable in a script deletes nothing.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function assertConfirmed(confirm: unknown, tenantId: string): void {
  const ask = `to delete this tenant and everything it holds, send its id again as confirm=${tenantId}; nothing was deleted`;
  // Missing, repeated (which a query string allows) or no id at all: the request is malformed.
  if (typeof confirm !== 'string' || !UUID.test(confirm)) {
    throw errors.validation(`query.confirm: ${ask}`);
  }
  // Well-formed but naming another Tenant: the request and the path disagree.
  if (confirm.toLowerCase() !== tenantId) {
    throw errors.conflict(`query.confirm: names another tenant than ${tenantId}; ${ask}`);
  }
}

/** Operator API: a Tenant's deletion (docs/operations.md#offboarding-a-tenant). */
export function tenantDeletionHandlers(deps: {
  pool: Pool;
  tenantDeleter: TenantDeleter;
}): Pick<RouteHandlers<typeof manifest.routes>, 'deleteTenant'> {
  return {
    deleteTenant: async (req, res) => {
      // An unknown Tenant is a 404 before the confirmation is looked at: nothing to confirm.
      const tenantId = uuidParam(req.params.tenantId, 'no such tenant');
      if (!(await tenantRowExists(deps, tenantId))) throw errors.notFound('no such tenant');
      assertConfirmed(req.query.confirm, tenantId);
      const request = await requestTenantDeletion(deps, tenantId);
      // Finished by another request between the two reads.
      if (request === null) throw errors.notFound('no such tenant');
      // In the background; a deletion already under way here is not started twice.
      deps.tenantDeleter.kick(tenantId);
      const body: TenantDeletionResponse = {
        id: tenantId,
        status: 'deleting',
        requestedAt: request.requestedAt.toISOString(),
      };
      res.status(202).json(body);
    },
  };
}
