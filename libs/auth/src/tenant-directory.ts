import { errors } from '@herald/errors';

/** Answers whether a Tenant exists. Tenants belong to the auth service. */
export type TenantDirectory = (tenantId: string) => Promise<boolean>;

/**
 * A TenantDirectory that asks the auth service's internal route
 * (`GET /internal/v1/tenants/{id}` with SERVICE_TOKEN). Unreachable auth, a timeout or a 5xx
 * is a 503 for the operator, never a wrong 404.
 */
export function authTenantDirectory(options: {
  authUrl: string;
  serviceToken: string;
  timeoutMs?: number;
}): TenantDirectory {
  const timeoutMs = options.timeoutMs ?? 3_000;
  return async (tenantId) => {
    let res: Response;
    try {
      res = await fetch(`${options.authUrl}/internal/v1/tenants/${encodeURIComponent(tenantId)}`, {
        headers: { authorization: `Bearer ${options.serviceToken}` },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw errors.unavailable('cannot reach the auth service; retry later', err);
    }
    await res.arrayBuffer().catch(() => undefined);
    if (res.status === 200) return true;
    if (res.status === 404) return false;
    throw errors.unavailable(`the auth service answered ${res.status}; retry later`);
  };
}
