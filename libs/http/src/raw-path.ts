import type { RequestHandler } from 'express';
import { errors } from '@herald/errors';

/**
 * A dot-segment: a path segment that is exactly `.` or `..` once `%2e` is read as a dot, where
 * segments are separated by `/` or by an encoded `%2F` (a proxy that decodes the path splits
 * there too). Hex digits in either case. Decoded once only: `%252e` is `%2e` to the next layer,
 * a literal, not a dot. nginx's ingress refuses the same paths (infra/nginx/nginx.conf.template).
 */
const DOT_SEGMENT = /(?:^|\/|%2f)(?:\.|%2e){1,2}(?:\/|%2f|$)/i;

/**
 * The path of a raw request target, as it went over the wire: what comes before its query (`?`)
 * or a fragment (`#`, which nginx and Node both cut off too).
 */
function rawPath(target: string): string {
  const end = target.search(/[?#]/);
  return end === -1 ? target : target.slice(0, end);
}

/**
 * True when the path of the raw request target `target` (`/v1/contacts/a%2F..%2Fb?x=1`) has a
 * dot-segment. Dots inside a segment (`john.doe`, `a..b`, `...`) are not one.
 */
export function hasDotSegment(target: string): boolean {
  return DOT_SEGMENT.test(rawPath(target));
}

/**
 * Refuses, 400 validation_error, a request whose raw path has a dot-segment. A proxy in front
 * may choose where to send a request by its normalised path yet forward the raw one, so such a
 * path could reach a route other than the one it was admitted for; no route of Herald's needs
 * one.
 */
export const refuseDotSegments: RequestHandler = (req, _res, next) => {
  if (hasDotSegment(req.originalUrl)) {
    next(errors.validation('the request path must not have a "." or ".." segment'));
    return;
  }
  next();
};
