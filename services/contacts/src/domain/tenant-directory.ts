import { errors } from '@herald/errors';
import type { TenantDirectory } from './organizations.js';

/**
 * Tenants belong to the auth service; this asks its internal route. Unreachable auth is a
 * 503 for the operator, never a wrong 404.
 */
export function authTenantDirectory(options: {
  authUrl: string;
  serviceToken: string;
}): TenantDirectory {
  return async (tenantId) => {
    let res: Response;
    try {
      res = await fetch(`${options.authUrl}/internal/v1/tenants/${encodeURIComponent(tenantId)}`, {
        headers: { authorization: `Bearer ${options.serviceToken}` },
        signal: AbortSignal.timeout(3_000),
      });
    } catch (err) {
      throw errors.unavailable('cannot reach the auth service; retry later', err);
    }
    await res.arrayBuffer();
    if (res.status === 200) return true;
    if (res.status === 404) return false;
    throw errors.unavailable(`the auth service answered ${res.status}; retry later`);
  };
}
