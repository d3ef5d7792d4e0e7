export { authRoutes } from './auth.js';
export { billingRoutes, subscriptionSnapshot } from './billing.js';
export {
  internalClient,
  type Delivery,
  type RouteClient,
  type RouteInput,
  type ServiceClient,
} from './client.js';
export { contactDataRoutes } from './contact-data.js';
export {
  IDENTITY_RESOLUTION_PATH,
  MAX_IDENTITY_QUERIES,
  contactsRoutes,
  identityQuery,
  resolvedIdentity,
  resolveIdentitiesAnswer,
  resolveIdentitiesRequest,
  type IdentityQuery,
  type ResolvedIdentity,
  type ResolveIdentitiesAnswer,
  type ResolveIdentitiesRequest,
} from './identity-resolution.js';
export {
  defineInternalRoutes,
  pathOf,
  type AnswerOf,
  type InternalRouteSpec,
  type ParamNames,
  type PathParams,
} from './route.js';
export { localServiceUrl, SERVICE_PORTS, type ServiceName } from './services.js';
export { tenantDataDeletion, tenantDataRoutes, type TenantDataDeletion } from './tenant-data.js';
