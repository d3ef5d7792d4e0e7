import type { Express } from 'express';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from './logger.js';

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
   * Stops accepting, waits for in-flight requests, then runs the onShutdown hooks. With
   * `drainMs`, it first answers on the open connections that long, closing each after its answer.
   */
  close(options?: { drainMs?: number }): Promise<void>;
}

const DRAIN_MS = 2_000;

export async function startServer(app: Express, options: ServerOptions): Promise<RunningServer> {
  const { logger, shutdownTimeoutMs = 10_000, onShutdown = [] } = options;
  const server = app.listen(options.port, options.host);
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
  let draining = false;
  // While draining, every answer closes its connection: a client's next request opens a new one,
  // which the load balancer (no longer listing this pod) sends elsewhere. Closing a kept-alive
  // connection instead races a request the client may be sending on it at that very moment.
  server.prependListener('request', (_req, res: ServerResponse) => {
    if (draining) res.shouldKeepAlive = false;
  });
  const close = ({ drainMs = 0 }: { drainMs?: number } = {}) => {
    closing ??= (async () => {
      if (drainMs > 0) {
        draining = true;
        await new Promise((resolve) => setTimeout(resolve, drainMs));
      }
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive sockets with no request in flight would hold close() open.
      server.closeIdleConnections();
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), shutdownTimeoutMs);
      });
      if ((await Promise.race([stopped, timedOut])) === 'timeout') {
        logger.warn('in-flight requests did not finish in time; closing their connections');
        server.closeAllConnections();
        await stopped;
      }
      clearTimeout(timer);
      for (const hook of onShutdown) {
        try {
          await hook();
        } catch (err) {
          logger.error({ err }, 'shutdown hook failed');
        }
      }
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
