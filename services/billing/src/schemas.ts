import { z } from 'zod';

/** Answer shapes: routes type their bodies with these, and the OpenAPI document shows them. */
export const subscriptionStatusResponse = z.object({
  state: z.enum(['active', 'suspended']),
  consecutiveFailures: z.number().int().min(0),
});

export const subscriptionSnapshotResponse = subscriptionStatusResponse.extend({
  /** +1 on every change; 0 for a Tenant that never had a billing event. */
  version: z.number().int().min(0),
});

export type SubscriptionStatusResponse = z.infer<typeof subscriptionStatusResponse>;
export type SubscriptionSnapshotResponse = z.infer<typeof subscriptionSnapshotResponse>;
