import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { AppError, SubscriptionSuspendedError, errors } from './app-error.js';
import { isDependencyUnavailable } from './unavailable.js';

interface Logger {
  error(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** What express and its body parser throw: http-errors with a `status`, `expose` and `type`. */
interface HttpError {
  type?: string;
  status?: number;
  expose?: boolean;
}

/** Maps anything thrown to the answer the caller sees. Unknown errors become a bare 500. */
export function toHttpError(err: unknown): AppError | SubscriptionSuspendedError {
  if (err instanceof AppError || err instanceof SubscriptionSuspendedError) return err;
  const { type, status, expose } = (err ?? {}) as HttpError;
  if (type === 'entity.too.large' || status === 413) return errors.payloadTooLarge();
  if (type === 'entity.parse.failed')
    return errors.validation('request body is not valid JSON', err);
  if (type === 'charset.unsupported' || type === 'encoding.unsupported') {
    return errors.validation('unsupported request body encoding', err);
  }
  if (type === 'request.aborted' || type === 'request.size.invalid') {
    return errors.validation('request body was incomplete', err);
  }
  if (
    err instanceof URIError ||
    (err as Error | null)?.message?.startsWith('Failed to decode param')
  ) {
    return errors.validation('the path has malformed percent-encoding', err);
  }
  // Any other client fault express or a parser raises (e.g. a body that fails to decompress).
  if (expose && typeof status === 'number' && status >= 400 && status < 500) {
    return errors.validation('the request could not be read', err);
  }
  if (isDependencyUnavailable(err)) return errors.unavailable(undefined, err);
  return errors.internal(err);
}

export function sendError(res: Response, err: AppError | SubscriptionSuspendedError): void {
  if (err instanceof SubscriptionSuspendedError) {
    res.status(402).type('application/problem+json').send(JSON.stringify(err.toBody()));
    return;
  }
  res.status(err.status).set(err.headers).json(err.toBody());
}

/** The one express error middleware: writes the documented body, never a stack trace. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.writableEnded) {
      // Answered already (by the answer deadline, say): the error has no one to go to.
      logger.warn(
        { err, requestId: res.locals.requestId as unknown },
        'request failed after it was answered',
      );
      return;
    }
    if (res.headersSent) {
      // Too late for a clean answer (e.g. mid-stream): let express close the connection.
      next(err);
      return;
    }
    const httpError = toHttpError(err);
    if (httpError.status >= 500) {
      logger.error({ err, requestId: res.locals.requestId as unknown }, 'request failed');
    }
    sendError(res, httpError);
  };
}

/** Terminal middleware: nothing matched, so the route is unknown. */
export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(errors.notFound(`no route ${req.method} ${req.path}`));
};

/** For `router.route(path).get(...).all(methodNotAllowed(['GET']))`. */
export function methodNotAllowed(allowed: readonly string[]): RequestHandler {
  return (_req, _res, next) => next(errors.methodNotAllowed(allowed));
}
