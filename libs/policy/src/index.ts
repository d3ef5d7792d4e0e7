export {
  budgetKey,
  createApiPolicy,
  type ApiPolicy,
  type ApiPolicyDeps,
  type GuardOptions,
} from './api-policy.js';
export {
  DEFAULT_RATE_BUDGETS,
  budgetKindOf,
  rateBudgetsEnv,
  rateBudgetsFrom,
  type BudgetKind,
  type RateBudgets,
} from './budgets.js';
export {
  billingSubscriptions,
  type BillingSubscriptionsOptions,
  type SubscriptionSource,
} from './subscription-source.js';
export {
  decodeSnapshot,
  encodeSnapshot,
  storeSubscriptionState,
  subscriptionKey,
  type SubscriptionSnapshot,
  type SubscriptionState,
} from './subscription-state.js';
export {
  chargeTokens,
  peekTokens,
  takeTokens,
  type BucketLimits,
  type BucketResult,
} from './token-bucket.js';
export { publicApiEnv, startPublicApi, type PublicApi } from './public-api.js';
