export {
  AppError,
  SubscriptionSuspendedError,
  UnresolvedIdentityError,
  errors,
  type AppErrorOptions,
  type ErrorCode,
  type UnresolvedItem,
} from './app-error.js';
export { isDependencyUnavailable } from './unavailable.js';
export {
  errorHandler,
  methodNotAllowed,
  notFoundHandler,
  sendError,
  toHttpError,
} from './express.js';
