import { randomUUID } from 'node:crypto';
import type { Pool } from '@herald/db';
import { errors } from '@herald/errors';
import { insertTenant, tenantExists, type Tenant } from '../data/tenants-repository.js';

export interface TenantDeps {
  pool: Pool;
}

export function createTenant(deps: TenantDeps, input: { name: string }): Promise<Tenant> {
  return insertTenant(deps.pool, { id: randomUUID(), name: input.name });
}

/** 404 unless the tenant exists. */
export async function assertTenantExists(deps: TenantDeps, tenantId: string): Promise<void> {
  if (!(await tenantExists(deps.pool, tenantId))) throw errors.notFound('no such tenant');
}
