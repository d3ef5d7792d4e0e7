// Answers that the shared code gives on behalf of every service (the ingress, the policy guard,
// the admin guard, the error middleware), for the OpenAPI document's examples. Captured through
// the local stack's ingress unless a comment says otherwise; libs/api-reference checks each
// against its schema.

/** nginx's own 404 for a path no route matches. */
export const notFoundExample = { code: 'not_found', message: 'There is no such route.' };

/** nginx's own 405 (TRACE, on any path); a service's names the methods it takes instead. */
export const methodNotAllowedExample = {
  code: 'method_not_allowed',
  message: 'The method is not allowed here.',
};

/** nginx's own 413: `client_max_body_size` refuses the body before any service sees it. */
export const payloadTooLargeExample = {
  code: 'payload_too_large',
  message: 'The request body is larger than 1 MiB.',
};

/** The answer to a path with a `.` or `..` segment, from the ingress or any service. */
export const dotSegmentExample = {
  code: 'validation_error',
  message: 'the request path must not have a "." or ".." segment',
};

/**
 * The error middleware's answer to an unexpected failure: taken from it directly (no service of
 * the stack fails on purpose), as every service mounts it.
 */
export const internalErrorExample = { code: 'internal_error', message: 'internal error' };

/**
 * nginx's 503 (with `Retry-After: 5`) for a service that refuses the connection or answers
 * nothing for 60 s: the stack's rendered ingress config run on another port, its upstreams
 * pointed at a closed port and at one that never answers.
 */
export const serviceUnavailableExample = {
  code: 'service_unavailable',
  message: 'The service is unavailable; try again in a few seconds.',
};

/**
 * nginx's built-in 502 and 504 pages (server_tokens off, as in ingress-nginx), which an ingress
 * controller sends unless its own error pages are configured: a plain nginx with an upstream on a
 * closed port, and one with a 2 s read timeout on an upstream that never answers.
 */
export const badGatewayPage =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';
export const gatewayTimeoutPage =
  '<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n<center><h1>504 Gateway Time-out</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';

/** The policy guard's 402, to a write of a Tenant suspended after three failed payments. */
export const subscriptionSuspendedExample = {
  type: 'subscription_suspended',
  title: 'Subscription suspended',
  status: 402,
  detail: 'The subscription of this tenant is suspended; data is read-only until billing is fixed.',
};

/** The policy guard's 429 (with `Retry-After: 1`), when a key's read budget was used up. */
export const rateLimitedExample = {
  code: 'rate_limited',
  message: 'request budget used up; retry after the number of seconds in Retry-After',
};

/** The policy guard's 401: no access token. */
export const unauthenticatedExample = {
  code: 'unauthenticated',
  message: 'missing, malformed or expired access token',
};

/** The admin guard's 401: a wrong ADMIN_TOKEN. */
export const adminUnauthorizedExample = {
  code: 'unauthenticated',
  message: 'missing or wrong admin token',
};

/** The policy guard's 403 for each scope, to a key without it: the message names the scope. */
export const insufficientScopeExamples = {
  'contacts:read': { code: 'insufficient_scope', message: 'missing scope contacts:read' },
  'contacts:write': { code: 'insufficient_scope', message: 'missing scope contacts:write' },
  'contacts:export': { code: 'insufficient_scope', message: 'missing scope contacts:export' },
  'contacts:erase': { code: 'insufficient_scope', message: 'missing scope contacts:erase' },
  'events:write': { code: 'insufficient_scope', message: 'missing scope events:write' },
};

/** Every operator route's 404 for a Tenant id that names no Tenant. */
export const noSuchTenantExample = { code: 'not_found', message: 'no such tenant' };
