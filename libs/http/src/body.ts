import express, { type RequestHandler } from 'express';
import { errors } from '@herald/errors';

/** Decisions A: request bodies are at most 1 MiB. */
export const MAX_BODY_BYTES = 1024 * 1024;

const parseJson = express.json({ limit: MAX_BODY_BYTES, strict: false, type: () => true });

/**
 * For routes that take a body: Content-Type must be application/json (decisions A), then the
 * body is parsed with the 1 MiB limit. Over the limit is 413, malformed JSON 400.
 */
export function jsonBody(): RequestHandler[] {
  const requireJson: RequestHandler = (req, _res, next) => {
    if (!req.is('application/json')) {
      next(errors.validation('Content-Type must be application/json'));
      return;
    }
    next();
  };
  return [requireJson, parseJson];
}
