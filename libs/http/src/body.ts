import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import express, { type RequestHandler } from 'express';
import { errors } from '@herald/errors';
import {
  HOLDS_NOT_WELL_FORMED,
  illFormedText,
  KEY_NOT_WELL_FORMED,
  mayEscapeSurrogate,
  NOT_WELL_FORMED,
} from './unicode.js';
import { formatPath } from './validate.js';

/** Request bodies are at most 1 MiB (larger: 413). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** How a 400 names a place in the body, from its path: `body.email`, `events[3].eventName`. */
export type BodyFieldName = (path: readonly PropertyKey[]) => string;

/** `body`, `body.email`, `body.scopes[1]`, `body[2]`. */
export const bodyFieldName: BodyFieldName = (path) =>
  `body${typeof path[0] === 'number' || path.length === 0 ? '' : '.'}${formatPath(path)}`;

/**
 * The deepest place a 400 names: deeper than any schema reads, and a message naming a place a
 * whole body deep would be larger than the body.
 */
const MAX_NAMED_DEPTH = 128;

/** Bodies whose text escapes a surrogate: only their parsed value needs the walk. */
const escapesSurrogate = new WeakSet<IncomingMessage>();

/**
 * JSON is UTF-8 (RFC 8259 §8.1). A decoder turns bytes that are not UTF-8, in this or any other
 * charset, into U+FFFD, which would make distinct values one: refused instead.
 */
function verifyUtf8(req: IncomingMessage, _res: unknown, body: Buffer, encoding: string): void {
  if (encoding !== 'utf-8') {
    throw errors.validation('unsupported request body encoding: JSON must be UTF-8');
  }
  if (!isUtf8(body)) throw errors.validation('request body is not valid UTF-8');
  if (mayEscapeSurrogate(body)) escapesSurrogate.add(req);
}

const parseJson = express.json({
  limit: MAX_BODY_BYTES,
  strict: false,
  type: () => true,
  verify: verifyUtf8,
});

/**
 * For routes that take a body: Content-Type must be application/json (else 400), then the
 * body is parsed with the 1 MiB limit. Over the limit is 413, malformed JSON 400, and so is a
 * body that is not UTF-8 or holds a string or key that is not well-formed Unicode (an unpaired
 * surrogate); that 400 names the field, as `fieldName` writes its path.
 */
export function jsonBody(fieldName: BodyFieldName = bodyFieldName): RequestHandler[] {
  const requireJson: RequestHandler = (req, _res, next) => {
    // req.is() answers null when there is no body at all: say what is really missing.
    const hasBody =
      req.get('content-length') !== '0' &&
      (req.get('content-length') ?? req.get('transfer-encoding'));
    if (!hasBody) {
      next(errors.validation('a JSON request body is required'));
      return;
    }
    if (!req.is('application/json')) {
      next(errors.validation('Content-Type must be application/json'));
      return;
    }
    next();
  };
  // Every string and key of every body, fields the route ignores included: no schema can forget
  // the rule.
  const requireWellFormed: RequestHandler = (req, _res, next) => {
    if (!escapesSurrogate.has(req)) {
      next();
      return;
    }
    const found = illFormedText(req.body);
    if (found) {
      const { path, key } = found;
      const message =
        path.length > MAX_NAMED_DEPTH
          ? `${fieldName(path.slice(0, MAX_NAMED_DEPTH))}: ${HOLDS_NOT_WELL_FORMED}`
          : `${fieldName(path)}: ${key ? KEY_NOT_WELL_FORMED : NOT_WELL_FORMED}`;
      next(errors.validation(message));
      return;
    }
    next();
  };
  return [requireJson, parseJson, requireWellFormed];
}
