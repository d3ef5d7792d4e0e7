import { createInternalClient } from '@herald/http';
import {
  IDENTITY_RESOLUTION_PATH,
  resolveIdentitiesAnswer,
  type ResolveIdentitiesRequest,
} from '@herald/internal-api';
import type { IdentityResolver } from '../domain/identities.js';
import { timedLookup } from './identity-metrics.js';

/**
 * The contacts service's batch lookup (with the service token). Unreachable, a timeout or a 5xx
 * is a 503 with Retry-After: nothing is recorded and the caller resends the request.
 */
export function contactsIdentityResolver(options: {
  contactsUrl: string;
  serviceToken: string;
  timeoutMs?: number;
}): IdentityResolver {
  const contacts = createInternalClient({
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
    const request: ResolveIdentitiesRequest = { tenantId, items: [...queries] };
    const { status, text } = await contacts.call({
      method: 'POST',
      path: IDENTITY_RESOLUTION_PATH,
      json: request,
      consequence: 'nothing was recorded; retry later',
    });
    if (status !== 200) {
      // Our own request was refused (a wrong service token, say): a fault here, not the caller's.
      throw new Error(`the contacts service answered ${status} to the identity lookup`);
    }
    const { items } = resolveIdentitiesAnswer.parse(JSON.parse(text));
    if (items.length !== queries.length) {
      throw new Error(`the contacts service answered ${items.length} items for ${queries.length}`);
    }
    return items;
  }
}
