export { createHttpApp, type HttpAppOptions, type ReadinessCheck } from './app.js';
export {
  bodyAdmission,
  type AdmissionState,
  type BodyAdmission,
  type BodyAdmissionOptions,
} from './admission.js';
export { jsonBody, MAX_BODY_BYTES } from './body.js';
export { answerDeadline, PUBLIC_ANSWER_DEADLINE_MS } from './deadline.js';
export { publicCors } from './cors.js';
export { createLogger, type Logger, type RequestLogOptions } from './logger.js';
export { hasDotSegment, refuseDotSegments } from './raw-path.js';
export { REQUEST_ID_HEADER, requestId } from './request-id.js';
export { startServer, type RunningServer, type ServerOptions } from './server.js';
export { formatPath, parseOrThrow } from './validate.js';
export {
  decodeCursor,
  encodeCursor,
  nextCursor,
  optionalQueryParameters,
  pageQuery,
} from './paging.js';
export {
  NOT_STORABLE,
  NO_CONTROL_PATTERN,
  STORABLE_JSON_VALUE_REF,
  STORABLE_PATTERN,
  storable,
} from './schemas.js';
export { buildOpenApi, errorSchemas, type ApiOperation } from './openapi.js';
export {
  adminUnauthorizedExample,
  insufficientScopeExamples,
  noSuchTenantExample,
  unauthenticatedExample,
} from './examples.js';
export {
  createInternalClient,
  type InternalAnswer,
  type InternalCall,
  type InternalClient,
  type InternalClientOptions,
  type InternalRequest,
} from './internal-client.js';
export { isUuid, uuidParam, uuidParameter } from './uuid.js';
export {
  defineService,
  internalCallersOf,
  manifestProblems,
  openApiPath,
  operationsOf,
  settingsOf,
  type HeapLimits,
  type HttpMethod,
  type IngressRule,
  type PrefixRule,
  type ProcessSpec,
  type RouteAccess,
  type RouteSpec,
  type RouteTable,
  type ServiceManifest,
} from './manifest.js';
export {
  mountRoutes,
  routeTableAgreement,
  type MountOptions,
  type RouteGuards,
  type RouteHandler,
  type RouteHandlers,
  type ServiceGuard,
} from './routes.js';
