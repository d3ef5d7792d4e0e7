import type { Request, RequestHandler } from 'express';
import { pino, type Logger } from 'pino';
import { assignRequestId } from './request-id.js';

export type { Logger };

/**
 * Structured JSON logs, one object per line. Authorization headers and anything that looks
 * like a credential are redacted; personal data must never be passed in.
 */
export function createLogger(options: { service: string; level?: string }): Logger {
  return pino({
    name: options.service,
    level: options.level ?? 'info',
    base: { service: options.service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: {
      paths: ['req.headers.authorization', '*.password', '*.secret', '*.token', '*.accessToken'],
      censor: '[redacted]',
    },
  });
}

export interface RequestLogOptions {
  /**
   * Internal (`/internal/...`) answers are logged only when they are errors (status 400 and
   * up) or at least this slow, in milliseconds; default 1000.
   */
  slowInternalMs?: number;
}

/** Health probes arrive every few seconds from every replica's kubelet: never logged. */
const UNLOGGED_URLS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);
const isInternal = (url: string) => url === '/internal' || url.startsWith('/internal/');

/**
 * The matched route's pattern (`/v1/contacts/:id`), never the raw URL: paths and query strings
 * can carry customers' ids and emails. Undefined when no route matched (a 404).
 */
function routePattern(req: Request): string | undefined {
  const route = req.route as { path?: unknown } | undefined;
  return typeof route?.path === 'string' ? `${req.baseUrl}${route.path}` : undefined;
}

/**
 * One JSON line per answer, written when the response closes (sent, or the connection dropped):
 * `req.id`, `req.method`, `route`, `res.statusCode`, `responseTime` (ms) and `msg`
 * (`GET 200`); a 5xx adds `err`. The process logger writes it directly: no child logger is
 * built per request, as nothing logs through one; handlers that log take the request id from
 * `res.locals.requestId`.
 *
 * Service-to-service calls (`/internal/...`) are many per public request and uneventful when
 * they succeed quickly, so only their errors and slow answers are logged.
 */
export function requestLog(logger: Logger, options: RequestLogOptions = {}): RequestHandler {
  const slowInternalMs = options.slowInternalMs ?? 1_000;
  return (req, res, next) => {
    const id = assignRequestId(req, res);
    const url = req.url;
    if (UNLOGGED_URLS.has(url)) {
      next();
      return;
    }
    const internal = isInternal(url);
    const start = Date.now();
    res.once('close', () => {
      const responseTime = Date.now() - start;
      const statusCode = res.statusCode;
      if (internal && statusCode < 400 && responseTime < slowInternalMs) return;
      const line: Record<string, unknown> = {
        req: { id, method: req.method },
        route: routePattern(req),
        res: { statusCode },
        responseTime,
      };
      if (statusCode >= 500) line.err = new Error(`failed with status code ${statusCode}`);
      logger.info(line, `${req.method} ${statusCode}`);
    });
    next();
  };
}
