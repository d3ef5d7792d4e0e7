import { randomUUID } from 'node:crypto';
import type { Pool } from '@herald/db';
import { errors } from '@herald/errors';
import { decodeCursor, encodeCursor } from '@herald/http';
import {
  findLiveTenant,
  insertTenant,
  listTenants as selectTenants,
  tenantExists,
  type Tenant,
  type TenantPosition,
} from '../data/tenants-repository.js';

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

/** The Tenant, or 404 (also while it is being deleted). */
export async function tenantById(deps: TenantDeps, tenantId: string): Promise<Tenant> {
  const tenant = await findLiveTenant(deps.pool, tenantId);
  if (!tenant) throw errors.notFound('no such tenant');
  return tenant;
}

// at most 17 digits of microseconds: until the year 5138, within bigint and timestamptz
const CURSOR = /^(\d{1,17})\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** A page's cursor: `<created_at in microseconds>.<id>` of its last Tenant. */
const cursorOf = (position: TenantPosition) =>
  encodeCursor(`${position.createdAtUs}.${position.id}`);

function positionOf(cursor: string): TenantPosition {
  const [, createdAtUs, id] = decodeCursor(cursor, CURSOR);
  return { createdAtUs: BigInt(createdAtUs!), id: id! };
}

/** A page of live Tenants, newest first, and the cursor of the next page (null: the last). */
export async function listTenants(
  deps: TenantDeps,
  query: { search?: string; limit: number; cursor?: string },
): Promise<{ tenants: Tenant[]; nextCursor: string | null }> {
  const { tenants, next } = await selectTenants(deps.pool, {
    search: query.search,
    limit: query.limit,
    after: query.cursor === undefined ? undefined : positionOf(query.cursor),
  });
  return { tenants, nextCursor: next && cursorOf(next) };
}
