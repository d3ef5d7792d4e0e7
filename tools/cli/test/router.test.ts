import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { operatorRoutes } from '../src/forward/operator-routes.generated.js';
import { serviceFor, startRouter, type Route } from '../src/forward/router.js';

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The public routes as the stack's registry has them, for the install test's use. */
const publicRoutes: Route[] = [
  { exact: '/v1/token', service: 'auth' },
  { prefix: '/docs', service: 'auth' },
  { exact: '/v1/contacts', service: 'contacts' },
  { prefix: '/v1/contacts/', service: 'contacts' },
  { prefix: '/v1/events/', service: 'events' },
];

describe('serviceFor', () => {
  it('when given a path of each operator route, then it names the Service the operator Ingress routes it to', () => {
    const cases: Record<string, string | null> = {
      '/admin/v1/tenants': 'auth',
      '/admin/v1/tenants/': 'auth',
      '/admin/v1/tenants/t1': 'auth',
      '/admin/v1/tenants/t1/api-keys': 'auth',
      '/admin/v1/tenants/t1/api-keys/pk_1/revoke': 'auth',
      '/admin/v1/tenants/t1/event-retention': 'auth',
      '/admin/v1/tenants/t1/organizations': 'contacts',
      '/admin/v1/tenants/t1/event-names': 'events',
      '/admin/v1/tenants/t1/billing': 'billing',
      '/admin/v1/tenants/t1/billing/payment-failures': 'billing',
      '/admin/v1/tenants/t1/contacts': 'contacts',
      '/admin/v1/tenants/t1/contacts/c1/export': 'contacts',
      '/admin/v1/tenants/t1/contacts/c1': null,
      '/admin/v1/tenants/t1/events': null,
      '/internal/v1/tenants/t1': null,
      '/v1/token': null,
    };
    for (const [path, service] of Object.entries(cases)) {
      expect([path, serviceFor(operatorRoutes, path)]).toEqual([path, service]);
    }
  });

  it('when routes are exact, prefixes and expressions, then exact wins, prefixes match whole segments, and the longest prefix wins', () => {
    const routes = [...publicRoutes, ...operatorRoutes];
    const cases: Record<string, string | null> = {
      '/v1/token': 'auth',
      '/v1/tokens': null,
      '/docs': 'auth',
      '/docs/index.html': 'auth',
      '/docsx': null,
      '/v1/contacts': 'contacts',
      '/v1/contacts/ext-1/export': 'contacts',
      '/v1/events/by-email': 'events',
      '/v1/eventsx': null,
      '/admin/v1/tenants/t1/billing': 'billing',
    };
    for (const [path, service] of Object.entries(cases)) {
      expect([path, serviceFor(routes, path)]).toEqual([path, service]);
    }
    const nested: Route[] = [
      { prefix: '/a/', service: 'short' },
      { prefix: '/a/b/', service: 'long' },
    ];
    expect(serviceFor(nested, '/a/b/c')).toBe('long');
    expect(serviceFor(nested, '/a/c')).toBe('short');
  });
});

describe('startRouter', () => {
  it('when a request is routed, then its method, path, query and body reach the Service; an unrouted path is 404 and a Service without an upstream 503, in the API error format', async () => {
    const seen: { method?: string; url?: string; body: string }[] = [];
    const upstream = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, body });
        res.writeHead(201, { 'content-type': 'application/json' }).end('{"id":"org_1"}');
      });
    });
    const base = await listen(upstream);
    const router = await startRouter(operatorRoutes, (s) => (s === 'contacts' ? base : undefined));
    try {
      const res = await fetch(`${router.url}/admin/v1/tenants/t1/organizations?x=1`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"externalId":"o1"}',
      });
      expect(res.status).toBe(201);
      expect(await res.json()).toEqual({ id: 'org_1' });
      expect(seen).toEqual([
        {
          method: 'POST',
          url: '/admin/v1/tenants/t1/organizations?x=1',
          body: '{"externalId":"o1"}',
        },
      ]);

      const unrouted = await fetch(`${router.url}/internal/v1/x`);
      expect(unrouted.status).toBe(404);
      expect(await unrouted.json()).toEqual({
        code: 'not_found',
        message: 'There is no such route.',
      });

      const absent = await fetch(`${router.url}/admin/v1/tenants/t1/billing`);
      expect(absent.status).toBe(503);
      expect(await absent.json()).toMatchObject({ code: 'service_unavailable' });
    } finally {
      await router.close();
      upstream.close();
    }
  });

  it('when a Service refuses the connection, then the answer is 502 service_unavailable', async () => {
    const closed = createServer();
    const base = await listen(closed);
    closed.close();
    const router = await startRouter(operatorRoutes, () => base);
    try {
      const res = await fetch(`${router.url}/admin/v1/tenants`, { method: 'POST' });
      expect(res.status).toBe(502);
      expect(await res.json()).toMatchObject({ code: 'service_unavailable' });
    } finally {
      await router.close();
    }
  });

  it('when a connection to a pod is idle for 1 s, then the router closes it, before a draining pod would', async () => {
    let opened = 0;
    let closedCount = 0;
    const upstream = createServer((_req, res) => res.end('ok'));
    upstream.on('connection', (socket) => {
      opened += 1;
      socket.on('close', () => (closedCount += 1));
    });
    const base = await listen(upstream);
    const router = await startRouter(publicRoutes, () => base);
    try {
      await (await fetch(`${router.url}/v1/contacts/a`)).text();
      await (await fetch(`${router.url}/v1/contacts/b`)).text();
      expect(opened).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(closedCount).toBe(1);
      await (await fetch(`${router.url}/v1/contacts/c`)).text();
      expect(opened).toBe(2);
    } finally {
      await router.close();
      upstream.close();
    }
  });

  it('when the caller leaves in the middle of a streamed answer, then the request to the Service is closed too', async () => {
    let upstreamClosed = false;
    const upstream = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': open\n\n');
      res.once('close', () => (upstreamClosed = true));
    });
    const base = await listen(upstream);
    const router = await startRouter(operatorRoutes, () => base);
    try {
      const leave = new AbortController();
      const res = await fetch(`${router.url}/admin/v1/tenants/t1/event-names`, {
        signal: leave.signal,
      });
      const reader = res.body!.getReader();
      await reader.read();
      leave.abort();
      for (let i = 0; i < 50 && !upstreamClosed; i += 1)
        await new Promise((r) => setTimeout(r, 20));
      expect(upstreamClosed).toBe(true);
    } finally {
      await router.close();
      upstream.closeAllConnections();
      upstream.close();
    }
  });

  it('when the Service goes away in the middle of an answer, then the caller sees its answer cut, not a finished one', async () => {
    const upstream = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': open\n\n');
      setTimeout(() => req.socket.destroy(), 50);
    });
    const base = await listen(upstream);
    const router = await startRouter(operatorRoutes, () => base);
    try {
      const res = await fetch(`${router.url}/admin/v1/tenants/t1/event-names`);
      await expect(res.text()).rejects.toThrow();
    } finally {
      await router.close();
      upstream.close();
    }
  });
});
