export {
  assertIdentifierLookup,
  assertOriginAllowed,
  assertScope,
  authenticate,
  principalOf,
} from './middleware.js';
export { DEFAULT_SECRET_KEY_SCOPES, PUBLISHABLE_KEY_SCOPES, SCOPES, type Scope } from './scopes.js';
export {
  CLAIMS,
  DEFAULT_AUDIENCE,
  DEFAULT_ISSUER,
  TOKEN_ALGORITHM,
  TOKEN_TTL_SECONDS,
  TOKEN_TYPE,
  PUBLISHABLE_CLIENT_ID_PREFIX,
  type Principal,
  type PublishableKeyRules,
} from './token.js';
export { createTokenVerifier, type TokenVerifier, type TokenVerifierOptions } from './verifier.js';
export { requireAdminToken } from './admin.js';
export {
  adminTokenEnv,
  refuseSharedTokens,
  serviceCallersEnv,
  serviceTokenEnv,
  tokenVerifierEnv,
} from './env.js';
export {
  MIN_TOKEN_LENGTH,
  parseServiceCallers,
  requireServiceCaller,
  serviceCallerOf,
  tokenDigest,
  type ServiceCallerGuard,
  type ServiceCallers,
  type ServiceCallerToken,
} from './service-callers.js';
export { authTenantDirectory, type TenantDirectory } from './tenant-directory.js';
export {
  REVOCATION_LIST_WINDOW_SECONDS,
  createRevocationList,
  type RevocationList,
  type RevocationListOptions,
} from './revocations.js';
