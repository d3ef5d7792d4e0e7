import { contactsRoutes, internalClient } from '@herald/internal-api';
import type { IdentityResolver } from '../../recording/identities.js';
import { timedLookup } from '../identity-metrics.js';

/**
 * The contacts service's batch lookup (with the service token). Unreachable, a timeout or a 5xx
 * is a 503 with Retry-After: nothing is recorded and the caller resends the request.
 */
export function contactsIdentityResolver(options: {
  contactsUrl: string;
  serviceToken: string;
  timeoutMs?: number;
}): IdentityResolver {
  const { resolveIdentities } = internalClient(contactsRoutes, {
    baseUrl: options.contactsUrl,
    serviceToken: options.serviceToken,
    serviceName: 'the contacts service',
    timeoutMs: options.timeoutMs ?? 3_000,
  });
  return (tenantId, queries) => timedLookup('contacts', () => resolve(tenantId, queries));

  async function resolve(
    tenantId: string,
    queries: Parameters<IdentityResolver>[1],
  ): ReturnType<IdentityResolver> {
    const { status, text } = await resolveIdentities.call({
      json: { tenantId, items: [...queries] },
      consequence: 'nothing was recorded; retry later',
    });
    if (status !== 200) {
      // Our own request was refused (a wrong service token, say): a fault here, not the caller's.
      throw new Error(`the contacts service answered ${status} to the identity lookup`);
    }
    const { items } = resolveIdentities.parse(JSON.parse(text));
    if (items.length !== queries.length) {
      throw new Error(`the contacts service answered ${items.length} items for ${queries.length}`);
    }
    return items;
  }
}
