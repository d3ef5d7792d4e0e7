// Loopback servers of a test's own: stand-ins for the services around the one under test.
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandInServer {
  url: string;
  /** Stops listening and ends the connections still open. */
  close(): Promise<void>;
}

const listenOnLoopback = async (server: Server): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};

/**
 * A loopback port nothing listens on at the moment. Another process may take it before it is
 * used: a caller that binds it later tries again with another one when it is taken.
 */
export async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  const port = await listenOnLoopback(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * An HTTP server on a free loopback port, standing in for another service (the seam, never the
 * real thing).
 */
export async function startStandInServer(handler: RequestListener): Promise<StandInServer> {
  const server = createServer(handler);
  const port = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
