import { secret, url, z } from '@herald/config';
import { authRoutes, localServiceUrl } from '@herald/internal-api';
import { DEFAULT_AUDIENCE, DEFAULT_ISSUER } from './token.js';
import {
  MIN_TOKEN_LENGTH,
  parseServiceCallers,
  tokenDigest,
  type ServiceCallers,
} from './service-callers.js';

/**
 * The variables of every service that verifies access tokens; the auth service reads the issuer
 * and audience too, to sign with.
 */
export const tokenVerifierEnv = {
  AUTH_JWKS_URL: url(`${localServiceUrl('auth')}${authRoutes.jwks.path}`).describe(
    'where the auth service publishes the keys access tokens are signed with (JWKS)',
  ),
  AUTH_ISSUER: z
    .string()
    .min(1)
    .default(DEFAULT_ISSUER)
    .describe("the access tokens' `iss`: the auth service signs it, the others require it"),
  AUTH_AUDIENCE: z
    .string()
    .min(1)
    .default(DEFAULT_AUDIENCE)
    .describe("the access tokens' `aud`: the auth service signs it, the others require it"),
};

/** The operator API's token: only processes that serve operator (`/admin`) routes read it. */
export const adminTokenEnv = {
  ADMIN_TOKEN: secret(MIN_TOKEN_LENGTH).describe(
    `bearer token of the operator API, at least ${MIN_TOKEN_LENGTH} characters; a service refuses one equal to its service tokens`,
  ),
};

/**
 * This process's own token for the internal routes of the services it calls: each calling
 * process has its own, never shared with another process nor with ADMIN_TOKEN.
 */
export const serviceTokenEnv = {
  SERVICE_TOKEN: secret(MIN_TOKEN_LENGTH).describe(
    `the process's own bearer token for the internal routes it may call, at least ${MIN_TOKEN_LENGTH} characters, different for each process`,
  ),
};

/**
 * Who may call this process's internal routes: `name:token` entries, comma-separated, a name
 * several times during a rotation; a token as itself or as `sha256:<hex>` (see
 * `parseServiceCallers`). Which caller may call which route is in the service's manifest.
 * Unset or empty: no process may call them.
 */
export const serviceCallersEnv = {
  SERVICE_CALLERS: z
    .string()
    .default('')
    .transform((text, ctx): ServiceCallers => {
      try {
        return parseServiceCallers(text);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    })
    .describe(
      'who may call its internal routes: `name:token` or `name:sha256:<hex>` entries, comma-separated, a name several times during a rotation; empty: no process may',
    ),
};

interface IssueSink {
  addIssue(issue: { code: 'custom'; message: string; path: string[] }): void;
}

/**
 * A config refinement (`.superRefine(refuseSharedTokens)` on a schema with any of the variables
 * above): ADMIN_TOKEN must differ from the process's SERVICE_TOKEN and from every token in
 * SERVICE_CALLERS, so one leaked secret never opens both the operator and the internal routes.
 * (That one token stands for one caller only is checked when SERVICE_CALLERS is read.)
 */
export function refuseSharedTokens(
  config: { ADMIN_TOKEN?: unknown; SERVICE_TOKEN?: unknown; SERVICE_CALLERS?: unknown },
  ctx: IssueSink,
): void {
  if (typeof config.ADMIN_TOKEN !== 'string') return;
  const admin = tokenDigest(config.ADMIN_TOKEN);
  if (typeof config.SERVICE_TOKEN === 'string' && tokenDigest(config.SERVICE_TOKEN).equals(admin)) {
    ctx.addIssue({
      code: 'custom',
      path: ['ADMIN_TOKEN'],
      message:
        'must differ from SERVICE_TOKEN: the operator and service tokens are separate secrets',
    });
  }
  const callers = config.SERVICE_CALLERS as ServiceCallers | undefined;
  const same = callers?.tokens?.find((t) => t.digest.equals(admin));
  if (same) {
    ctx.addIssue({
      code: 'custom',
      path: ['ADMIN_TOKEN'],
      message: `must differ from every token in SERVICE_CALLERS (it equals one of ${same.name}'s)`,
    });
  }
}
