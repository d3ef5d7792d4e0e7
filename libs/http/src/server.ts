import type { Express } from 'express';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errors } from '@herald/errors';
import { HEALTH_PATHS, type Logger } from './logger.js';

export interface ServerOptions {
  host: string;
  port: number;
  logger: Logger;
  /** How long in-flight requests may take to finish once shutdown starts. */
  shutdownTimeoutMs?: number;
  /** Closed in order after the server stops: consumers first, then pools, telemetry last. */
  onShutdown?: Array<() => Promise<unknown>>;
  /** Exit the process on SIGTERM/SIGINT after a graceful close (true for real services). */
  handleSignals?: boolean;
  /**
   * On SIGTERM/SIGINT, how long the server goes on answering on the connections it has, each
   * answer with `Connection: close`, before it stops. Default 2 s; 0 stops at once.
   */
  drainMs?: number;
}

export interface RunningServer {
  server: Server;
  url: string;
  /**
   * With `drainMs`, first answers as usual that long, closing each connection after its answer;
   * `app.locals.draining` (an AbortSignal) aborts as this starts, for streams to end.
   * Then waits for in-flight requests and runs the onShutdown hooks while the port stays open,
   * answering health probes 200 and anything else 503; then stops listening.
   */
  close(options?: { drainMs?: number }): Promise<void>;
}

const DRAIN_MS = 2_000;
/** How long open connections may still get their answers once the port is closed. */
const CLOSE_GRACE_MS = 500;

export async function startServer(app: Express, options: ServerOptions): Promise<RunningServer> {
  const { logger, shutdownTimeoutMs = 10_000, onShutdown = [] } = options;
  let draining = false;
  let stopping = false;
  // Handlers of long-lived answers (a live view's stream) end them when it aborts: a draining
  // process would otherwise wait the whole shutdown timeout for answers that never finish.
  const drain = new AbortController();
  (app.locals as { draining?: AbortSignal }).draining = drain.signal;
  let inFlight = 0;
  let lastRequestDone: (() => void) | undefined;
  const server = createServer((req, res) => {
    // While draining, every answer closes its connection: a client's next request opens a new
    // one, which the load balancer (no longer listing this pod) sends elsewhere. Closing a
    // kept-alive connection instead races a request the client may be sending on it right then.
    if (draining) res.shouldKeepAlive = false;
    if (stopping) {
      answerWhileStopping(req, res);
      return;
    }
    inFlight += 1;
    res.once('close', () => {
      inFlight -= 1;
      if (inFlight === 0) lastRequestDone?.();
    });
    app(req, res);
  });
  server.listen(options.port, options.host);
  // Longer than the ingress's and clients' idle keep-alive, so the server never closes a socket
  // just as a client reuses it (which the client sees as ECONNRESET).
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
  logger.info({ url }, 'listening');

  let closing: Promise<void> | undefined;
  const close = ({ drainMs = 0 }: { drainMs?: number } = {}) => {
    closing ??= (async () => {
      draining = true;
      drain.abort();
      if (drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs));
      // The port stays open until the hooks have run: the kubelet probes a terminating pod until
      // its container has exited, and a refused probe is a Warning event on the pod.
      stopping = true;
      server.closeIdleConnections();
      const finished = new Promise<void>((resolve) => {
        lastRequestDone = resolve;
        if (inFlight === 0) resolve();
      });
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), shutdownTimeoutMs);
      });
      if ((await Promise.race([finished, timedOut])) === 'timeout') {
        logger.warn('in-flight requests did not finish in time; closing their connections');
        server.closeAllConnections();
      }
      clearTimeout(timer);
      for (const hook of onShutdown) {
        try {
          await hook();
        } catch (err) {
          logger.error({ err }, 'shutdown hook failed');
        }
      }
      // Every answer now closes its connection: a probe being answered gets its answer, and only
      // a connection still silent after a moment is cut.
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const lingering = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
      await stopped;
      clearTimeout(lingering);
      logger.info('stopped');
    })();
    return closing;
  };

  if (options.handleSignals) {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.once(signal, () => {
        logger.info({ signal }, 'shutting down');
        close({ drainMs: options.drainMs ?? DRAIN_MS }).then(
          () => process.exit(0),
          (err: unknown) => {
            logger.error({ err }, 'shutdown failed');
            process.exit(1);
          },
        );
      });
    }
  }
  return { server, url, close };
}

/**
 * Once in-flight requests are done: probes get 200 (Kubernetes has already taken the pod out
 * of its Services' endpoints, whatever a probe says), any other request 503 with Retry-After.
 */
function answerWhileStopping(req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '').split('?')[0]!;
  if (req.method === 'GET' && HEALTH_PATHS.has(path)) {
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify({ status: 'stopping' }));
    return;
  }
  const err = errors.unavailable('the service is shutting down; retry');
  res.writeHead(err.status, { ...err.headers, 'Content-Type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(err.toBody()));
}
