import type { TenantDirectory } from '@herald/auth';
import { isUniqueViolation, type Pool } from '@herald/db';
import { errors } from '@herald/errors';
import { externalId as externalIdSchema } from '../schemas.js';
import { decodeCursor, encodeCursor } from '@herald/http';
import {
  insertOrganization,
  listOrganizations,
  type Organization,
} from '../data/organizations-repository.js';

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

/** A cursor is the externalId the page ended with. */
const CURSOR = /^([\s\S]{1,256})$/;

/** The externalId a cursor names; one no organization can have is no cursor of this list. */
const positionOf = (cursor: string): string =>
  decodeCursor(cursor, CURSOR, ([, id]) => externalIdSchema.safeParse(id).success)[1]!;

/** A page of the Tenant's organizations by externalId, and the next page's cursor. */
export async function organizationsPage(
  deps: { pool: Pool; tenantExists: TenantDirectory },
  tenantId: string,
  query: { limit: number; cursor?: string | undefined },
): Promise<{ organizations: Organization[]; nextCursor: string | null }> {
  const after = query.cursor === undefined ? undefined : positionOf(query.cursor);
  if (!(await deps.tenantExists(tenantId))) throw errors.notFound('no such tenant');
  const rows = await listOrganizations(deps.pool, tenantId, { limit: query.limit, after });
  const organizations = rows.slice(0, query.limit);
  const last = organizations.at(-1);
  return {
    organizations,
    nextCursor: rows.length > query.limit && last ? encodeCursor(last.externalId) : null,
  };
}
