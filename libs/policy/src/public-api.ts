import {
  createRevocationList,
  createTokenVerifier,
  tokenVerifierEnv,
  type TokenVerifier,
} from '@herald/auth';
import { url } from '@herald/config';
import { localServiceUrl } from '@herald/internal-api';
import type { Redis } from '@herald/redis';
import { createApiPolicy, type ApiPolicy } from './api-policy.js';
import { rateBudgetsEnv, rateBudgetsFrom } from './budgets.js';
import { billingSubscriptions } from './subscription-source.js';

/** The variables of every service with public (customer) routes. */
export const publicApiEnv = {
  ...tokenVerifierEnv,
  ...rateBudgetsEnv,
  SERVICE_URL_AUTH: url(localServiceUrl('auth')).describe(
    'the auth service: whether a Tenant exists, the revocation list (polled every second)',
  ),
  SERVICE_URL_BILLING: url(localServiceUrl('billing')).describe(
    "the billing service, asked for a Tenant's subscription when the Redis mirror cannot tell",
  ),
};

type PublicApiConfig = {
  [K in keyof typeof publicApiEnv]: K extends keyof typeof rateBudgetsEnv ? number : string;
} & { SERVICE_TOKEN: string };

interface WarnLogger {
  warn(obj: object, msg: string): void;
}

export interface PublicApi {
  /** Verifies tokens, refusing those of revoked keys. */
  verifier: TokenVerifier;
  /** Its `ready()` rejects until the revocation list was fetched once. */
  policy: ApiPolicy;
  stop(): void;
}

/**
 * Everything a service needs to guard its public routes, wired the same way everywhere: the
 * token verifier with the revocation list (fetched once before the service takes traffic,
 * then every second) and the rate-budget and subscription policy.
 */
export async function startPublicApi(
  config: PublicApiConfig,
  deps: { redis: Redis; logger: WarnLogger },
): Promise<PublicApi> {
  const revocations = createRevocationList({
    authUrl: config.SERVICE_URL_AUTH,
    serviceToken: config.SERVICE_TOKEN,
    logger: deps.logger,
  });
  await revocations.start();
  const verifier = createTokenVerifier({
    jwksUrl: config.AUTH_JWKS_URL,
    issuer: config.AUTH_ISSUER,
    audience: config.AUTH_AUDIENCE,
    revocations,
  });
  const policy = createApiPolicy({
    verifier,
    redis: deps.redis,
    logger: deps.logger,
    budgets: rateBudgetsFrom(config),
    subscriptions: billingSubscriptions({
      billingUrl: config.SERVICE_URL_BILLING,
      serviceToken: config.SERVICE_TOKEN,
    }),
    // A process that starts while auth is down takes no traffic with an empty list.
    ready: () =>
      revocations.loaded()
        ? Promise.resolve()
        : Promise.reject(new Error('the revocation list has not been fetched from auth yet')),
  });
  return { verifier, policy, stop: () => revocations.close() };
}
