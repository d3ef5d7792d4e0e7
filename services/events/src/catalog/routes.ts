import type { TenantDirectory } from '@herald/auth';
import type { Pool } from '@herald/db';
import type { RouteHandlers } from '@herald/http';
import { eventNamesOf } from './catalog.js';
import type { manifest } from '../manifest.js';

/** Operator API: the event-name catalog Journey triggers are picked from. */
export function adminHandlers(deps: {
  pool: Pool;
  tenantExists: TenantDirectory;
}): Pick<RouteHandlers<typeof manifest.routes>, 'eventNames'> {
  return {
    eventNames: async (req, res) => {
      const names = await eventNamesOf(deps, req.params.tenantId);
      res.json({
        eventNames: names.map((n) => ({ name: n.name, firstSeenAt: n.firstSeenAt.toISOString() })),
      });
    },
  };
}
