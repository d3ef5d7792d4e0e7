import { decodeSnapshot, type SubscriptionSnapshot } from './subscription-state.js';

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
   * decisions G.2 allows. Default 500 ms.
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
  const remembered = new Map<string, { snapshot: SubscriptionSnapshot; until: number }>();

  return {
    async fetch(tenantId, { allowRemembered = false } = {}) {
      const now = performance.now();
      const hit = remembered.get(tenantId);
      if (allowRemembered && hit && hit.until > now) return hit.snapshot;
      try {
        const res = await fetch(
          new URL(`/internal/v1/tenants/${encodeURIComponent(tenantId)}/subscription`, billingUrl),
          {
            headers: { authorization: `Bearer ${serviceToken}` },
            signal: AbortSignal.timeout(timeoutMs),
          },
        );
        if (!res.ok) return null;
        const answer: unknown = await res.json();
        const body = (answer ?? {}) as Partial<SubscriptionSnapshot>;
        const snapshot = decodeSnapshot(
          `${String(body.state)}:${String(body.version)}:${String(body.consecutiveFailures)}`,
        );
        if (!snapshot) return null;
        if (remembered.size > 10_000) remembered.clear();
        remembered.set(tenantId, { snapshot, until: now + cacheMs });
        return snapshot;
      } catch {
        return null;
      }
    },
  };
}
