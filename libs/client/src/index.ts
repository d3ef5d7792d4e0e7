// @herald/client: the official TypeScript SDK of the Herald API (see README.md).
export {
  Contacts,
  Events,
  HeraldClient,
  MAX_EVENTS_PER_REQUEST,
  type ClientOptions,
  type HeraldClientOptions,
  type PublishableKeyCredentials,
  type SecretKeyCredentials,
  type UpsertResult,
} from './client.js';
export {
  CLIENT_CODES,
  ConnectionError,
  HeraldError,
  QueueFullError,
  RateLimitedError,
  SuspendedError,
  UnresolvedIdentityError,
  type HeraldErrorOptions,
} from './errors.js';
export { prepareEvent, type EventInput, type PreparedEvent } from './event.js';
export type { CallOptions, FetchLike } from './http.js';
export {
  backoffDelay,
  DEFAULT_RETRY,
  isRetryableStatus,
  parseRetryAfter,
  retryDelay,
  type RetryOptions,
} from './retry.js';
export { Tracker, type TrackedEvent, type TrackerOptions, type TrackInput } from './tracker.js';
export {
  EVENT_ROUTES,
  type Contact,
  type ContactByEmailFields,
  type ContactFields,
  type ContactIdEvent,
  type EmailEvent,
  type ErrorBody,
  type EventOf,
  type EventRoute,
  type EventsAccepted,
  type ExportedEvent,
  type ExportLine,
  type ExternalIdEvent,
  type OrganizationEvent,
  type SuspendedProblem,
  type TokenAnswer,
  type UnresolvedIdentityBody,
  type UnresolvedItem,
} from './types.js';
export type { paths } from './generated/openapi.js';
