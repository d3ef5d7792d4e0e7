export {
  SUBSCRIPTION_MIRROR_TTL_MS,
  decodeSnapshot,
  encodeSnapshot,
  storeSubscriptionState,
  subscriptionKey,
  type SubscriptionSnapshot,
  type SubscriptionState,
} from './subscription-state.js';
