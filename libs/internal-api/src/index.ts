export {
  IDENTITY_RESOLUTION_PATH,
  MAX_IDENTITY_QUERIES,
  identityQuery,
  resolvedIdentity,
  resolveIdentitiesAnswer,
  resolveIdentitiesRequest,
  type IdentityQuery,
  type ResolvedIdentity,
  type ResolveIdentitiesAnswer,
  type ResolveIdentitiesRequest,
} from './identity-resolution.js';
