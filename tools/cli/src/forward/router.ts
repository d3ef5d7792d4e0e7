// An HTTP router on loopback that sends each request to a Service by its path, as an ingress
// would: `herald-admin forward` puts one in front of the operator routes of an installation,
// and the chart's install test one in front of all its routes (it runs no Ingress controller).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';

/**
 * One ingress route: an exact path, a path prefix (whole segments, as Kubernetes' `Prefix`) or
 * a regular expression (anchored, as the operator Ingress has them), and the Service behind it.
 */
export interface Route {
  readonly exact?: string;
  readonly prefix?: string;
  readonly regex?: string;
  readonly service: string;
}

/** How long an idle connection to a pod is kept: below the services' 2 s drain. */
const IDLE_MS = 1_000;

function matches(route: Route, pathname: string): boolean {
  if (route.exact !== undefined) return pathname === route.exact;
  if (route.prefix !== undefined) {
    const bare = route.prefix.replace(/\/$/, '');
    return pathname === bare || pathname.startsWith(`${bare}/`);
  }
  return route.regex !== undefined && new RegExp(route.regex).test(pathname);
}

/**
 * The Service for a path, or null. Exact paths first, then regular expressions in order, then
 * the longest prefix: the order nginx tries them in.
 */
export function serviceFor(routes: readonly Route[], pathname: string): string | null {
  const exact = routes.find((r) => r.exact !== undefined && matches(r, pathname));
  if (exact) return exact.service;
  const regex = routes.find((r) => r.regex !== undefined && matches(r, pathname));
  if (regex) return regex.service;
  const prefixes = routes
    .filter((r) => r.prefix !== undefined && matches(r, pathname))
    .sort((a, b) => (b.prefix?.length ?? 0) - (a.prefix?.length ?? 0));
  return prefixes[0]?.service ?? null;
}

export interface Router {
  readonly url: string;
  close(): Promise<void>;
}

/** An error answer in the API's own format. */
function refuse(res: http.ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(`${JSON.stringify({ code, message })}\n`);
}

/**
 * Listens on `host:port` (port 0: a free one) and forwards each request to the base URL
 * `upstreamOf` gives its Service. A path no route names answers 404 `not_found`, as the ingress
 * does; a Service without an upstream (not deployed, or its forward restarting) answers 503 and
 * an unreachable one 502, each `service_unavailable`.
 */
export async function startRouter(
  routes: readonly Route[],
  upstreamOf: (service: string) => string | undefined,
  { host = '127.0.0.1', port = 0 }: { host?: string; port?: number } = {},
): Promise<Router> {
  // Kept-alive connections to the pods, each dropped after 1 s idle: shorter than the services'
  // 2 s drain on SIGTERM, so the router never sends on a connection the pod closes as idle when
  // its drain ends (every connection used during the drain is answered `Connection: close`).
  const agent = new http.Agent({ keepAlive: true, timeout: IDLE_MS });
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://router').pathname;
    const service = serviceFor(routes, pathname);
    if (service === null) {
      refuse(res, 404, 'not_found', 'There is no such route.');
      return;
    }
    const base = upstreamOf(service);
    if (base === undefined) {
      refuse(res, 503, 'service_unavailable', `The ${service} service is not reachable now.`);
      return;
    }
    const target = new URL(req.url ?? '/', base);
    const upstream = http.request(
      target,
      { method: req.method, headers: { ...req.headers, host: target.host }, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        // Either side ending ends the other: a caller that leaves closes the request to the pod
        // (a live view there ends), and a pod that goes away mid-answer cuts the caller's.
        pipeline(answer, res).catch(() => undefined);
      },
    );
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      if (res.headersSent) res.destroy(err);
      else refuse(res, 502, 'service_unavailable', `The ${service} service: ${err.code ?? err}.`);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
