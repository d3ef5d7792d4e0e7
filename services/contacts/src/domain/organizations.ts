import type { TenantDirectory } from '@herald/auth';
import { isUniqueViolation, type Pool } from '@herald/db';
import { errors } from '@herald/errors';
import { insertOrganization, type Organization } from '../data/organizations-repository.js';

export async function createOrganization(
  deps: { pool: Pool; tenantExists: TenantDirectory },
  tenantId: string,
  input: { externalId: string; name?: string | undefined },
): Promise<Organization> {
  if (!(await deps.tenantExists(tenantId))) throw errors.notFound('no such tenant');
  try {
    return await insertOrganization(deps.pool, tenantId, {
      externalId: input.externalId,
      name: input.name ?? null,
    });
  } catch (err) {
    if (isUniqueViolation(err))
      throw errors.conflict('an organization with this externalId already exists');
    throw err;
  }
}
