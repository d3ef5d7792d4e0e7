import { billingRoutes, internalClient } from '@herald/internal-api';
import type { SubscriptionSnapshot } from './subscription-state.js';

/** Where a service learns a Tenant's subscription when the Redis mirror cannot tell. */
export interface SubscriptionSource {
  /**
   * The snapshot from the billing service, or null when billing cannot be reached.
   * `allowRemembered`: an answer up to `cacheMs` old will do (Redis is down, so every write
   * would otherwise ask billing); without it billing is always asked.
   */
  fetch(
    tenantId: string,
    options?: { allowRemembered?: boolean },
  ): Promise<SubscriptionSnapshot | null>;
}

export interface BillingSubscriptionsOptions {
  /** The billing service, e.g. http://billing:8080. */
  billingUrl: string;
  serviceToken: string;
  /**
   * How long an answer is remembered for use while Redis is down: well under the 1 s
   * a change may take to reach every service. Default 500 ms.
   */
  cacheMs?: number;
  timeoutMs?: number;
}

/**
 * The billing service's internal route reads PostgreSQL (the source of truth) and rewrites
 * the Redis mirror, so one call per Tenant refills a flushed Redis. The short memory here
 * keeps a Redis outage from turning every write into a billing call.
 */
export function billingSubscriptions(options: BillingSubscriptionsOptions): SubscriptionSource {
  const { billingUrl, serviceToken, cacheMs = 500, timeoutMs = 1_000 } = options;
  const { subscriptionSnapshot } = internalClient(billingRoutes, {
    baseUrl: billingUrl,
    serviceToken,
    serviceName: 'the billing service',
    timeoutMs,
  });
  const remembered = new Map<string, { snapshot: SubscriptionSnapshot; until: number }>();
  // After billing failed, it is left alone this long: a hanging billing costs one timeout per
  // second, not one per write.
  const restMs = 1_000;
  let restingUntil = -Infinity;

  async function ask(tenantId: string): Promise<SubscriptionSnapshot | null> {
    if (performance.now() < restingUntil) return null;
    try {
      const res = await subscriptionSnapshot.send({ params: { tenantId } });
      if (!res.ok) throw new Error(`billing answered ${res.status}`);
      return subscriptionSnapshot.parse(await res.json());
    } catch {
      restingUntil = performance.now() + restMs;
      return null;
    }
  }

  return {
    async fetch(tenantId, { allowRemembered = false } = {}) {
      const hit = remembered.get(tenantId);
      if (allowRemembered && hit && hit.until > performance.now()) return hit.snapshot;
      const snapshot = await ask(tenantId);
      // Billing unreachable: the last answer it gave, however old, beats knowing nothing.
      if (!snapshot) return hit?.snapshot ?? null;
      if (remembered.size > 10_000) remembered.clear();
      remembered.set(tenantId, { snapshot, until: performance.now() + cacheMs });
      return snapshot;
    },
  };
}
