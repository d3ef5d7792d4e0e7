import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import {
  authRoutes,
  billingRoutes,
  contactDataRoutes,
  contactsRoutes,
  defineInternalRoutes,
  internalClient,
  localServiceUrl,
  pathOf,
  SERVICE_PORTS,
  type InternalRouteSpec,
} from '../../src/index.js';

// A stand-in for the serving service: each test sets how it answers.
let handler: (req: IncomingMessage, body: string, res: ServerResponse) => void;
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => handler(req, body, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const routes = defineInternalRoutes({
  thing: {
    method: 'get',
    path: '/internal/v1/tenants/:tenantId/things/:thingId',
    audience: 'internal',
    access: { kind: 'service', callers: ['events'] },
    summary: 'a thing',
    answer: z.object({ name: z.string() }),
  },
  count: {
    method: 'post',
    path: '/internal/v1/count',
    audience: 'internal',
    access: { kind: 'service', callers: ['events'] },
    summary: 'counts',
    requestBody: z.object({ items: z.array(z.string()) }),
    answer: z.object({ count: z.number().int() }),
  },
  forget: {
    method: 'post',
    path: '/internal/v1/forget/:id',
    audience: 'internal',
    access: { kind: 'service', callers: ['events'] },
    summary: 'forgets',
  },
});

const client = () =>
  internalClient(routes, {
    baseUrl,
    serviceToken: 'svc-token',
    serviceName: 'the other service',
    timeoutMs: 2_000,
  });

/** What the stand-in saw of each request. */
function recording(status: number, answer: string) {
  const seen: Array<Record<string, unknown>> = [];
  handler = (req, body, res) => {
    seen.push({
      method: req.method,
      url: req.url,
      authorization: req.headers.authorization,
      requestId: req.headers['x-request-id'],
      body,
    });
    res.writeHead(status, { 'content-type': 'application/json' }).end(answer);
  };
  return seen;
}

describe('internalClient', () => {
  it('when a route with parameters is called, then its method and path come from its definition, the values encoded', async () => {
    const seen = recording(200, '{"name":"n"}');
    const thing = client().thing;
    const res = await thing.send({
      params: { tenantId: 't1', thingId: 'a/b c' },
      requestId: 'req-1',
    });
    expect(thing.parse(await res.json())).toEqual({ name: 'n' });
    expect(seen).toEqual([
      {
        method: 'GET',
        url: '/internal/v1/tenants/t1/things/a%2Fb%20c',
        authorization: 'Bearer svc-token',
        requestId: 'req-1',
        body: '',
      },
    ]);
    expect(thing.url({ params: { tenantId: 't1', thingId: 'x' } })).toBe(
      `${baseUrl}/internal/v1/tenants/t1/things/x`,
    );
  });

  it('when a route with a body is called, then it is POSTed as JSON and the answer is read with its schema', async () => {
    const seen = recording(200, '{"count":2,"extra":true}');
    const count = client().count;
    const { status, text } = await count.call({
      json: { items: ['a', 'b'] },
      consequence: 'retry later',
    });
    expect(status).toBe(200);
    expect(count.parse(JSON.parse(text))).toEqual({ count: 2 });
    expect(seen).toMatchObject([
      { method: 'POST', url: '/internal/v1/count', body: '{"items":["a","b"]}' },
    ]);
  });

  it('when an answer does not fit the schema, or the route declares none, then parse throws', () => {
    expect(() => client().count.parse({ count: 'two' })).toThrow();
    expect(() => client().forget.parse({})).toThrow(/declares no answer schema/);
  });

  it('when the service answers 5xx to a call, then the 503 names the service and the consequence', async () => {
    recording(502, '');
    await expect(
      client().forget.call({
        params: { id: 'x' },
        body: 'discard',
        consequence: 'nothing was done',
      }),
    ).rejects.toMatchObject({
      status: 503,
      code: 'service_unavailable',
      message: 'the other service answered 502; nothing was done',
    });
    expect(client().forget.unavailable(409, 'retry later')).toMatchObject({
      status: 503,
      message: 'the other service answered 409; retry later',
    });
  });

  it('when a call lacks a parameter or names the wrong ones, then it does not compile', () => {
    const c = client();
    const compileOnly = () => {
      // @ts-expect-error the path's parameters are required
      void c.thing.send({});
      // @ts-expect-error thingId is missing
      void c.thing.send({ params: { tenantId: 't' } });
      // @ts-expect-error the body must fit the route's schema
      void c.count.send({ json: { items: [1] } });
      // @ts-expect-error a route without a body takes none
      void c.forget.send({ params: { id: 'x' }, json: {} });
    };
    expect(typeof compileOnly).toBe('function');
  });
});

describe('pathOf', () => {
  it('when a value is missing at run time, then it throws rather than call a wrong path', () => {
    expect(pathOf('/a/:id/b', { id: '1' })).toBe('/a/1/b');
    expect(() => pathOf('/a/:id/b', {})).toThrow('/a/:id/b: no value for :id');
  });
});

describe('the internal routes', () => {
  const all: Array<[string, InternalRouteSpec]> = Object.entries({
    ...authRoutes,
    ...billingRoutes,
    ...contactsRoutes,
    ...contactDataRoutes,
  });

  it('when listed, then each is internal, under /internal/v1 with its callers named, or open to anyone (the JWKS)', () => {
    for (const [id, route] of all) {
      expect([id, route.audience]).toEqual([id, 'internal']);
      if (route.access.kind === 'service') {
        expect(route.path).toMatch(/^\/internal\/v1\//);
        expect(route.access.callers.length).toBeGreaterThan(0);
      } else {
        expect([id, route.path]).toEqual(['jwks', '/.well-known/jwks.json']);
      }
    }
  });

  it('when a service is named, then its local URL is at its own port', () => {
    expect(new Set(Object.values(SERVICE_PORTS)).size).toBe(Object.keys(SERVICE_PORTS).length);
    expect(localServiceUrl('billing')).toBe('http://127.0.0.1:18084');
  });
});
