import { randomUUID } from 'node:crypto';
import type { Tenant, TenantsRepository } from '../data/tenants-repository.js';

export function createTenant(tenants: TenantsRepository, input: { name: string }): Promise<Tenant> {
  return tenants.insert({ id: randomUUID(), name: input.name });
}
