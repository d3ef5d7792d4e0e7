import { internalClient, tenantDataRoutes, type TenantDataDeletion } from '@herald/internal-api';

/**
 * A service holding data of Tenants (contacts, events, billing): one call of its
 * `deleteTenantData` route, which deletes for a few seconds and says whether anything is left.
 */
export interface TenantDataService {
  /** Its name, for logs and errors. */
  name: string;
  deleteTenantData(tenantId: string): Promise<TenantDataDeletion>;
}

/**
 * A call runs batches for about two seconds; one batch of the events service may read the whole
 * Events table (its organization Events have no index by Tenant) for up to a minute.
 */
const CALL_TIMEOUT_MS = 90_000;

/** The services at these base URLs, each called with this process's SERVICE_TOKEN. */
export function tenantDataServices(
  services: Readonly<Record<string, string>>,
  serviceToken: string,
): TenantDataService[] {
  return Object.entries(services).map(([name, baseUrl]) => {
    const { deleteTenantData } = internalClient(tenantDataRoutes, {
      baseUrl,
      serviceToken,
      serviceName: `the ${name} service`,
      timeoutMs: CALL_TIMEOUT_MS,
    });
    return {
      name,
      async deleteTenantData(tenantId) {
        const { status, text } = await deleteTenantData.call({
          params: { tenantId },
          consequence: "the Tenant's deletion goes on later",
        });
        if (status !== 200) {
          throw deleteTenantData.unavailable(status, "the Tenant's deletion goes on later");
        }
        return deleteTenantData.parse(JSON.parse(text));
      },
    };
  });
}
