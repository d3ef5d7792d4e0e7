import type { RequestHandler, Response } from 'express';
import {
  assertIdentifierLookup,
  assertOriginAllowed,
  assertScope,
  authenticate,
  type Scope,
  type TokenVerifier,
} from '@herald/auth';
import { SubscriptionSuspendedError, errors } from '@herald/errors';
import { createRedisGuard, taggedKey, type Redis } from '@herald/redis';
import { meter } from '@herald/telemetry';
import { budgetKindOf, type RateBudgets } from './budgets.js';
import type { SubscriptionSource } from './subscription-source.js';
import {
  decodeSnapshot,
  subscriptionKey,
  type SubscriptionSnapshot,
} from './subscription-state.js';
import { takeTokens, type BucketResult } from './token-bucket.js';

interface WarnLogger {
  warn(obj: object, msg: string): void;
}

export interface ApiPolicyDeps {
  verifier: TokenVerifier;
  redis: Redis;
  budgets: RateBudgets;
  /** Asked when the Redis mirror has no snapshot (flushed, restarted) or Redis is down. */
  subscriptions: SubscriptionSource;
  logger: WarnLogger;
  /** Rejects while the guard cannot yet judge tokens (the revocation list is not loaded). */
  ready?: () => Promise<void>;
}

export interface GuardOptions {
  scope: Scope;
  /**
   * Whether the route still works for a suspended Tenant. Reads always do; among writes only
   * the two erase routes: erasure works while suspended.
   */
  allowedWhileSuspended?: boolean;
  /**
   * Whether the route looks Contacts or organizations up by an identifier a stranger could
   * guess (email, externalId): refused to a publishable key without identifierLookup.
   */
  identifierLookup?: boolean;
}

/**
 * The rules every public route obeys, in this order: 401 (token), 403 (a publishable key used
 * from an Origin it does not allow), 429 (the key's budget), 403 (scope, then a publishable key
 * on a route that looks identifiers up), 402 (the Tenant's subscription, on writes). The budget
 * and, on writes, the subscription mirror are read in one pipelined round trip to Redis.
 */
export interface ApiPolicy {
  guard(options: GuardOptions): RequestHandler;
  /** A readiness check for the service's /readyz. */
  ready(): Promise<void>;
}

/** `herald:{ClientID}:budget:read|write`: tagged by ClientID, one Cluster slot per key. */
export const budgetKey = (clientId: string, kind: string) =>
  taggedKey('herald', clientId, 'budget', kind);

export function createApiPolicy(deps: ApiPolicyDeps): ApiPolicy {
  const { redis, budgets, subscriptions } = deps;
  // Redis away: requests are served (fail open); counted in redis.failures{use=policy}.
  const guard = createRedisGuard({
    use: 'policy',
    operations: ['budget', 'subscription'],
    logger: deps.logger,
    fallback: 'rate budgets are not enforced (fail open); subscriptions come from billing',
    // Generous, and three in a row before resting (for 1 s): one answer delayed by a busy event
    // loop must not switch the budgets off for the whole process.
    timeoutMs: 500,
    failuresBeforeRest: 3,
    cooldownMs: 1_000,
  });
  const failOpen = meter('herald.policy').createCounter('policy.fail_open', {
    unit: '{request}',
    description:
      'Requests served without a rule being checked because its store was unreachable (attribute rule: budget or subscription)',
  });
  // Every refusal of the guard, by the rule that refused: 401, 429, 403 or 402. The budget of a
  // 429 is the request's kind (read or write); no Tenant, key or path is ever an attribute.
  const refused = meter('herald.policy').createCounter('policy.refused', {
    unit: '{request}',
    description:
      'Requests the public routes refused, by rule: token (401), publishable (403: a publishable key outside its Origins or on a route it may not use), budget (429, with budget read or write), scope (403), subscription (402)',
  });
  // Every rule's series from the start, at 0: a rate over them (dashboards, alerts) reads 0 until
  // the first refusal rather than nothing.
  for (const rule of ['token', 'publishable', 'scope', 'subscription']) refused.add(0, { rule });
  for (const budget of ['read', 'write']) refused.add(0, { rule: 'budget', budget });
  for (const rule of ['budget', 'subscription']) failOpen.add(0, { rule });
  const refuse = (rule: 'token' | 'publishable' | 'scope', err: unknown, status: number): never => {
    if ((err as { status?: unknown } | null)?.status === status) refused.add(1, { rule });
    throw err;
  };

  async function subscriptionOf(
    tenantId: string,
    mirrored: PromiseSettledResult<string | null> | null,
  ): Promise<SubscriptionSnapshot | null> {
    if (mirrored?.status === 'fulfilled') {
      // A missing mirror (flushed, expired, restarted Redis): billing answers and refills it.
      return decodeSnapshot(mirrored.value) ?? subscriptions.fetch(tenantId);
    }
    return subscriptions.fetch(tenantId, { allowRemembered: true });
  }

  return {
    ready: deps.ready ?? (() => Promise.resolve()),
    guard({ scope, allowedWhileSuspended = false, identifierLookup = false }) {
      return async (req, res, next) => {
        const principal = await authenticate(req, res, deps.verifier).catch((err: unknown) =>
          refuse('token', err, 401),
        );
        // Before the budget: pages of other sites that embed the key do not spend it.
        try {
          assertOriginAllowed(principal, req.get('origin'));
        } catch (err) {
          refuse('publishable', err, 403);
        }
        const kind = budgetKindOf(req.method);
        const limits = budgets[kind];
        const checksSubscription = kind === 'write' && !allowedWhileSuspended;

        // Issued in the same tick: node-redis writes both in one batch (one round trip to a
        // single node; on a Cluster the two slots are asked in parallel).
        const [budget, mirrored] = await Promise.allSettled([
          guard.run('budget', () => takeTokens(redis, budgetKey(principal.clientId, kind), limits)),
          checksSubscription
            ? guard.run('subscription', () => redis.get(subscriptionKey(principal.tenantId)))
            : Promise.resolve(null),
        ]);

        if (budget.status === 'fulfilled') {
          setRateLimitHeaders(res, limits.burst, budget.value);
          if (!budget.value.allowed) {
            refused.add(1, { rule: 'budget', budget: kind });
            throw errors.rateLimited(budget.value.retryInMs / 1000);
          }
        } else {
          failOpen.add(1, { rule: 'budget' });
        }

        try {
          assertScope(principal, scope);
        } catch (err) {
          refuse('scope', err, 403);
        }
        if (identifierLookup) {
          try {
            assertIdentifierLookup(principal);
          } catch (err) {
            refuse('publishable', err, 403);
          }
        }

        if (checksSubscription) {
          const snapshot = await subscriptionOf(principal.tenantId, mirrored);
          if (snapshot === null) failOpen.add(1, { rule: 'subscription' });
          else if (snapshot.state === 'suspended') {
            refused.add(1, { rule: 'subscription' });
            throw new SubscriptionSuspendedError();
          }
        }
        next();
      };
    },
  };
}

/** `RateLimit-Reset`, in seconds: Reset is when the bucket is full again. */
function setRateLimitHeaders(res: Response, limit: number, result: BucketResult): void {
  res.set({
    'RateLimit-Limit': String(limit),
    'RateLimit-Remaining': String(result.remaining),
    'RateLimit-Reset': String(Math.ceil(result.fullInMs / 1000)),
  });
}
