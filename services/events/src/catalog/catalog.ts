import type { TenantDirectory } from '@herald/auth';
import type { Pool } from '@herald/db';
import { errors } from '@herald/errors';
import { listEventNames, type CatalogedEventName } from './data/event-names-repository.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The Tenant's event-name catalog (names as first recorded); an unknown Tenant is a 404. */
export async function eventNamesOf(
  deps: { pool: Pool; tenantExists: TenantDirectory },
  tenantId: string,
): Promise<CatalogedEventName[]> {
  if (!UUID.test(tenantId) || !(await deps.tenantExists(tenantId))) {
    throw errors.notFound('no such tenant');
  }
  return listEventNames(deps.pool, tenantId.toLowerCase());
}
