import express, { type Express, type RequestHandler } from 'express';
import { errorHandler, notFoundHandler } from '@herald/errors';
import { requestLog, type Logger, type RequestLogOptions } from './logger.js';
import { refuseDotSegments } from './raw-path.js';

/** A named dependency check for /readyz; it rejects when the dependency is unreachable. */
export type ReadinessCheck = () => Promise<unknown>;

export interface HttpAppOptions {
  logger: Logger;
  /** Dependencies /readyz checks, by name (e.g. `{ database: () => pool.query('select 1') }`). */
  readiness?: Record<string, ReadinessCheck>;
  /** Mounts the service's routes. */
  routes: (app: Express) => void;
  readinessTimeoutMs?: number;
  /** Which answers the request log skips (internal routes: only errors and slow answers). */
  requestLog?: RequestLogOptions;
}

async function runCheck(check: ReadinessCheck, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('readiness check timed out')), timeoutMs);
  });
  try {
    await Promise.race([check(), timeout]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

const noStore: RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', 'no-store');
  next();
};

/**
 * The Express 5 app every Herald service is built on: request ids, JSON request logs,
 * health routes, the service's routes, then 404 and the one error handler.
 */
export function createHttpApp(options: HttpAppOptions): Express {
  const { logger, readiness = {}, readinessTimeoutMs = 2000 } = options;
  const app = express();
  app.disable('x-powered-by');
  app.set('case sensitive routing', true);
  app.set('strict routing', false);
  // Behind the ingress: trust the X-Forwarded-* headers only from a loopback or cluster proxy.
  app.set('trust proxy', ['loopback', 'uniquelocal']);

  // Request ids and the request log in one middleware: one layer fewer on every request.
  app.use(requestLog(logger, options.requestLog));
  // Before any route or guard: a path with `.` or `..` segments is refused, not resolved.
  app.use(refuseDotSegments);
  // Answers carry Contacts, their identifiers and secrets: no cache or proxy keeps them unless a
  // route says otherwise (the JWKS, the rendered reference).
  app.use(noStore);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  // Dependencies only, draining or not: Kubernetes takes a terminating pod out of its Services'
  // ready endpoints when its deletion starts, whatever the probe says, and the kubelet goes on
  // probing it, so a drain that failed /readyz would only add a Warning event per stopping pod.
  app.get('/readyz', async (_req, res) => {
    const names = Object.keys(readiness);
    const results = await Promise.all(
      names.map(
        async (name) => [name, await runCheck(readiness[name]!, readinessTimeoutMs)] as const,
      ),
    );
    const checks = Object.fromEntries(results.map(([name, ok]) => [name, ok ? 'ok' : 'failing']));
    const failing = results.filter(([, ok]) => !ok).map(([name]) => name);
    if (failing.length > 0) {
      res
        .status(503)
        .set('Retry-After', '5')
        .json({ code: 'service_unavailable', message: `not ready: ${failing.join(', ')}`, checks });
      return;
    }
    res.json({ status: 'ready', checks });
  });

  options.routes(app);

  app.use(notFoundHandler);
  app.use(errorHandler(logger));
  return app;
}
