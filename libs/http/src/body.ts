import express, { type RequestHandler } from 'express';
import { errors } from '@herald/errors';

/** Request bodies are at most 1 MiB (larger: 413). */
export const MAX_BODY_BYTES = 1024 * 1024;

const parseJson = express.json({ limit: MAX_BODY_BYTES, strict: false, type: () => true });

/**
 * For routes that take a body: Content-Type must be application/json (else 400), then the
 * body is parsed with the 1 MiB limit. Over the limit is 413, malformed JSON 400.
 */
export function jsonBody(): RequestHandler[] {
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
  return [requireJson, parseJson];
}
