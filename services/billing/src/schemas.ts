import { z } from 'zod';

/** Answer shapes: routes type their bodies with these, and the OpenAPI document shows them. */
export const subscriptionStatusResponse = z.object({
  state: z.enum(['active', 'suspended']),
  consecutiveFailures: z.number().int().min(0),
});

export type SubscriptionStatusResponse = z.infer<typeof subscriptionStatusResponse>;
