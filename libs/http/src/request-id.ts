import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

// A caller's id is echoed only when it is short and plain, so it cannot inject into logs.
const ACCEPTABLE_ID = /^[\w.:@/+=-]{1,128}$/;

export const REQUEST_ID_HEADER = 'X-Request-Id';

/** Echoes the caller's (or the ingress's) X-Request-Id, or makes one; stores it on res.locals. */
export const requestId: RequestHandler = (req, res, next) => {
  const incoming = req.get(REQUEST_ID_HEADER);
  const id = incoming && ACCEPTABLE_ID.test(incoming) ? incoming : randomUUID();
  res.locals.requestId = id;
  res.set(REQUEST_ID_HEADER, id);
  next();
};
