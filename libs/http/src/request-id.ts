import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';

// A caller's id is echoed only when it is short and plain, so it cannot inject into logs.
const ACCEPTABLE_ID = /^[\w.:@/+=-]{1,128}$/;

export const REQUEST_ID_HEADER = 'X-Request-Id';
const REQUEST_ID_HEADER_LOWER = 'x-request-id';

/**
 * The caller's (or the ingress's) X-Request-Id when acceptable, else a new one: echoed in the
 * answer and stored on `res.locals.requestId`, where handlers that log find it.
 */
export function assignRequestId(req: Request, res: Response): string {
  const incoming = req.headers[REQUEST_ID_HEADER_LOWER];
  const id = typeof incoming === 'string' && ACCEPTABLE_ID.test(incoming) ? incoming : randomUUID();
  res.locals.requestId = id;
  res.setHeader(REQUEST_ID_HEADER, id);
  return id;
}

/** Echoes the caller's (or the ingress's) X-Request-Id, or makes one; stores it on res.locals. */
export const requestId: RequestHandler = (req, res, next) => {
  assignRequestId(req, res);
  next();
};
