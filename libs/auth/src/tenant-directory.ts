import { authRoutes, internalClient } from '@herald/internal-api';

/** Answers whether a Tenant exists. Tenants belong to the auth service. */
export type TenantDirectory = (tenantId: string) => Promise<boolean>;

/**
 * A TenantDirectory that asks the auth service's internal route (`tenantExists`, with this
 * process's own SERVICE_TOKEN). Unreachable auth, a timeout or a 5xx is a 503 for the operator,
 * never a wrong 404.
 */
export function authTenantDirectory(options: {
  authUrl: string;
  serviceToken: string;
  timeoutMs?: number;
}): TenantDirectory {
  const { tenantExists } = internalClient(authRoutes, {
    baseUrl: options.authUrl,
    serviceToken: options.serviceToken,
    serviceName: 'the auth service',
    timeoutMs: options.timeoutMs ?? 3_000,
  });
  return async (tenantId) => {
    const { status } = await tenantExists.call({
      params: { tenantId },
      body: 'discard',
      consequence: 'retry later',
    });
    if (status === 200) return true;
    if (status === 404) return false;
    throw tenantExists.unavailable(status, 'retry later');
  };
}
