import type { Request, RequestHandler } from 'express';
import { pino, type DestinationStream, type Logger } from 'pino';
import { assignRequestId } from './request-id.js';

export type { Logger };

/** The fields of an error that name what failed without quoting data: PostgreSQL's among them. */
const LOGGED_ERROR_FIELDS = ['code', 'constraint', 'routine'] as const;
/** How many `cause`s deep an error is logged. */
const MAX_CAUSE_DEPTH = 3;

/**
 * An error as a log line shows it: its class, `code`, `constraint` and `routine` when it has
 * them, its stack frames, and its `cause` the same way. Never its message or any other field: a
 * database error's `detail` (`Key (email)=(…) already exists.`), `where`, `hint`, `parameters`
 * and even its message quote the values of the row, and other errors' messages may quote input.
 */
function loggedError(err: unknown, depth = 0): Record<string, unknown> {
  if (typeof err !== 'object' || err === null) return { type: typeof err };
  const fields = err as Record<string, unknown>;
  const logged: Record<string, unknown> = { type: err.constructor?.name ?? 'Object' };
  for (const field of LOGGED_ERROR_FIELDS) {
    const value = fields[field];
    if (typeof value === 'string' || typeof value === 'number') logged[field] = value;
  }
  if (typeof fields.stack === 'string') {
    // The first lines are `<name>: <message>`; only the frames below them are kept.
    logged.stack = fields.stack
      .split('\n')
      .filter((line) => line.startsWith('    at '))
      .join('\n');
  }
  if (fields.cause !== undefined && depth < MAX_CAUSE_DEPTH) {
    logged.cause = loggedError(fields.cause, depth + 1);
  }
  return logged;
}

/**
 * Structured JSON logs, one object per line, to stdout unless a `destination` is given.
 * Authorization headers and anything that looks like a credential are redacted, and an `err`
 * is logged without its message or data (see loggedError); give such a line a message of its
 * own, as pino would otherwise take the error's. Personal data must never be passed in.
 */
export function createLogger(options: {
  service: string;
  level?: string;
  destination?: DestinationStream;
}): Logger {
  return pino(
    {
      name: options.service,
      level: options.level ?? 'info',
      base: { service: options.service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: loggedError },
      redact: {
        paths: ['req.headers.authorization', '*.password', '*.secret', '*.token', '*.accessToken'],
        censor: '[redacted]',
      },
    },
    options.destination,
  );
}

export interface RequestLogOptions {
  /**
   * Internal (`/internal/...`) answers are logged only when they are errors (status 400 and
   * up) or at least this slow, in milliseconds; default 1000.
   */
  slowInternalMs?: number;
}

/** The probes' paths. They arrive every few seconds from every replica's kubelet: never logged. */
export const HEALTH_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);
const isInternal = (url: string) => url === '/internal' || url.startsWith('/internal/');

/**
 * The matched route's pattern (`/v1/contacts/:id`), never the raw URL: paths and query strings
 * can carry customers' ids and emails. Undefined when no route matched (a 404).
 */
function routePattern(req: Request): string | undefined {
  const route = req.route as { path?: unknown } | undefined;
  return typeof route?.path === 'string' ? `${req.baseUrl}${route.path}` : undefined;
}

/** What the request log says of a request whose caller went away before it was answered. */
const CLIENT_CLOSED_REQUEST = 499;

/**
 * One JSON line per answer, written when the response closes (sent, or the connection dropped):
 * `req.id`, `req.method`, `route`, `res.statusCode`, `responseTime` (ms) and `msg`
 * (`GET 200`); a 5xx adds `err`. A request whose caller went away before anything was sent
 * reads 499, as in nginx's logs (its handler may still have done its work). The process logger
 * writes it directly: no child logger is built per request, as nothing logs through one;
 * handlers that log take the request id from `res.locals.requestId`.
 *
 * Service-to-service calls (`/internal/...`) are many per public request and uneventful when
 * they succeed quickly, so only their errors and slow answers are logged.
 */
export function requestLog(logger: Logger, options: RequestLogOptions = {}): RequestHandler {
  const slowInternalMs = options.slowInternalMs ?? 1_000;
  return (req, res, next) => {
    const id = assignRequestId(req, res);
    const url = req.url;
    if (HEALTH_PATHS.has(url)) {
      next();
      return;
    }
    const internal = isInternal(url);
    const start = Date.now();
    res.once('close', () => {
      const responseTime = Date.now() - start;
      // Nothing sent yet: the caller went away before its answer. res.statusCode would still
      // read 200, its default, so the line takes nginx's 499 (client closed request) instead.
      const statusCode = res.headersSent ? res.statusCode : CLIENT_CLOSED_REQUEST;
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
