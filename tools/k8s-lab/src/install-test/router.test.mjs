// The test's stand-in for the Ingress controller: `node --test tools/k8s-lab/src/install-test/router.test.mjs`.
import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import { serviceFor, startRouter } from './router.mjs';

/**
 * Listens on a free port of 127.0.0.1; resolves the port.
 * @param {http.Server} server
 */
async function listen(server) {
  await /** @type {Promise<void>} */ (
    new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  );
  return /** @type {import('node:net').AddressInfo} */ (server.address()).port;
}

test('each path goes to the Service the chart routes it to, anything else nowhere', () => {
  const cases = {
    '/v1/token': 'auth',
    '/v1/openapi.json': 'auth',
    '/docs': 'auth',
    '/docs/index.html': 'auth',
    '/v1/contacts': 'contacts',
    '/v1/contacts/ext-1/export': 'contacts',
    '/v1/events/by-email': 'events',
    '/admin/v1/tenants': 'auth',
    '/admin/v1/tenants/t1/api-keys': 'auth',
    '/admin/v1/tenants/t1/api-keys/pk_1/revoke': 'auth',
    '/admin/v1/tenants/t1/organizations': 'contacts',
    '/admin/v1/tenants/t1/event-names': 'events',
    '/admin/v1/tenants/t1/billing/subscription': 'billing',
    '/internal/v1/tenants/t1': null,
    '/.well-known/jwks.json': null,
    '/v1/eventsx': null,
    '/docsx': null,
  };
  for (const [path, service] of Object.entries(cases))
    assert.equal(serviceFor(path), service, path);
});

test('a request is forwarded with its method, path, query and body; an unrouted path is 404', async () => {
  const seen = [];
  const upstream = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, body });
      res.writeHead(202, { 'content-type': 'application/json' }).end('{"accepted":1}');
    });
  });
  const base = `http://127.0.0.1:${await listen(upstream)}`;
  const router = await startRouter({ events: base });
  try {
    const res = await fetch(`${router.url}/v1/events/by-contact-id?x=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    assert.equal(res.status, 202);
    assert.deepEqual(await res.json(), { accepted: 1 });
    assert.deepEqual(seen, [
      { method: 'POST', url: '/v1/events/by-contact-id?x=1', body: '{"a":1}' },
    ]);
    assert.equal((await fetch(`${router.url}/internal/v1/x`)).status, 404);
    // a routed Service the router was not given (not deployed) is not reachable either
    assert.equal((await fetch(`${router.url}/v1/token`, { method: 'POST' })).status, 404);
  } finally {
    await router.close();
    upstream.close();
  }
});

test('a connection to a pod idle for 1 s is closed by the router, before a draining pod would close it', async () => {
  let opened = 0;
  let closed = 0;
  const upstream = http.createServer((req, res) => res.end('ok'));
  upstream.on('connection', (socket) => {
    opened += 1;
    socket.on('close', () => (closed += 1));
  });
  const router = await startRouter({ contacts: `http://127.0.0.1:${await listen(upstream)}` });
  try {
    await (await fetch(`${router.url}/v1/contacts/a`)).text();
    await (await fetch(`${router.url}/v1/contacts/b`)).text();
    assert.equal(opened, 1, 'kept alive between requests close together');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal(closed, 1, 'closed by the router once idle');
    await (await fetch(`${router.url}/v1/contacts/c`)).text();
    assert.equal(opened, 2);
  } finally {
    await router.close();
    upstream.close();
  }
});
