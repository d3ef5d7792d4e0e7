import { authRoutes, internalClient } from '@herald/internal-api';
import type { RetentionSource } from '../retention-policy.js';

/**
 * Every Tenant's Event retention from the auth service's internal route (with this process's
 * SERVICE_TOKEN). Rejects when auth cannot be reached, answers anything but 200 or an answer
 * that does not fit the route's schema: the sweep then deletes nothing, never by a guess.
 */
export function authRetentionSource(options: {
  authUrl: string;
  serviceToken: string;
  timeoutMs?: number;
}): RetentionSource {
  const { eventRetentionOverview } = internalClient(authRoutes, {
    baseUrl: options.authUrl,
    serviceToken: options.serviceToken,
    serviceName: 'the auth service',
    timeoutMs: options.timeoutMs ?? 10_000,
  });
  return async () => {
    const consequence = 'no Events were deleted; the next sweep tries again';
    const { status, text } = await eventRetentionOverview.call({ consequence });
    if (status !== 200) throw eventRetentionOverview.unavailable(status, consequence);
    return eventRetentionOverview.parse(JSON.parse(text));
  };
}
