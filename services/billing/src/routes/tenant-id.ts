import { errors } from '@herald/errors';
import { tenantIdParam } from '../schemas.js';

/** The path's Tenant id, lower-cased; a malformed one names no Tenant: 404. */
export function tenantIdOf(raw: string | undefined): string {
  const parsed = tenantIdParam.safeParse(raw);
  if (!parsed.success) throw errors.notFound('no such tenant');
  return parsed.data;
}
