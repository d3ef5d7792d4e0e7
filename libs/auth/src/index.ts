export { assertScope, authenticate, principalOf } from './middleware.js';
export { DEFAULT_SECRET_KEY_SCOPES, PUBLISHABLE_KEY_SCOPES, SCOPES, type Scope } from './scopes.js';
export {
  CLAIMS,
  DEFAULT_AUDIENCE,
  DEFAULT_ISSUER,
  TOKEN_ALGORITHM,
  TOKEN_TTL_SECONDS,
  TOKEN_TYPE,
  type Principal,
} from './token.js';
export { createTokenVerifier, type TokenVerifier, type TokenVerifierOptions } from './verifier.js';
export { requireAdminToken, requireServiceToken } from './admin.js';
export { operatorAndServiceTokensEnv, tokenVerifierEnv } from './env.js';
export { authTenantDirectory, type TenantDirectory } from './tenant-directory.js';
export {
  REVOCATION_LIST_WINDOW_SECONDS,
  createRevocationList,
  type RevocationList,
  type RevocationListOptions,
} from './revocations.js';
