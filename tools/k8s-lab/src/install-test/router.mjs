// The release's front door for the test, on the node: the cluster runs no Ingress controller, so
// this routes each request to a Service's ClusterIP by its path, as the chart's public Ingress and
// operator Ingress would (the same paths), so that clients written for the ingress (the k6
// scenarios) run unchanged against the release.
import http from 'node:http';

/**
 * Which Service answers a path: the chart's public routes first, then the operator routes.
 * @type {[RegExp, string][]}
 */
const ROUTES = [
  [/^\/v1\/token$/, 'auth'],
  [/^\/v1\/openapi\.json$/, 'auth'],
  [/^\/docs(\/|$)/, 'auth'],
  [/^\/v1\/contacts(\/|$)/, 'contacts'],
  [/^\/v1\/events\//, 'events'],
  [/^\/admin\/v1\/tenants\/[^/]+\/organizations\/?$/, 'contacts'],
  [/^\/admin\/v1\/tenants\/[^/]+\/event-names\/?$/, 'events'],
  [/^\/admin\/v1\/tenants\/[^/]+\/billing(\/.*)?$/, 'billing'],
  [/^\/admin\/v1\/tenants(\/[^/]+\/api-keys(\/.*)?)?\/?$/, 'auth'],
];

/** How long an idle connection to a pod is kept: below the services' 2 s drain. */
const IDLE_MS = 1_000;

/** The Service (auth, contacts, events, billing) for a request path, or null. */
export function serviceFor(pathname) {
  for (const [pattern, service] of ROUTES) if (pattern.test(pathname)) return service;
  return null;
}

/**
 * Listens on 127.0.0.1 (a free port) and forwards each request to `urls[service]`; a path no
 * route names is 404, an unreachable Service 502, as an ingress answers them.
 * @param {Record<string, string>} urls each Service's base URL, by name
 */
export async function startRouter(urls) {
  // Kept-alive connections to the pods, each dropped after 1 s idle: shorter than the services'
  // 2 s drain on SIGTERM, so the router never sends on a connection the pod closes as idle when
  // its drain ends (every connection used during the drain is answered `Connection: close`).
  const agent = new http.Agent({ keepAlive: true, timeout: IDLE_MS });
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url, 'http://router').pathname;
    const service = serviceFor(pathname);
    const base = service && urls[service];
    if (!base) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no route\n');
      return;
    }
    const target = new URL(req.url, base);
    const upstream = http.request(
      target,
      { method: req.method, headers: { ...req.headers, host: target.host }, agent },
      (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', (/** @type {NodeJS.ErrnoException} */ err) => {
      if (res.headersSent) res.destroy(err);
      else res.writeHead(502, { 'content-type': 'text/plain' }).end(`${err.code ?? err}\n`);
    });
    req.pipe(upstream);
  });
  await /** @type {Promise<void>} */ (
    new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  );
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
