// The internal routes of the running services, called directly on their loopback ports (the
// ingress never routes /internal): each Herald process has its own token (the local stack keeps
// them in .herald/service-tokens/<process>), and a service lets a caller into a route only when
// its manifest names that caller for the route. A token of one process is no key to the routes
// of services it does not call, nor to routes of a service it calls for something else.
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { adminToken, repoRoot } from './support.js';

const dataDir = path.resolve(repoRoot, process.env.HERALD_DATA_DIR || '.herald');

interface RegistryEntry {
  name: string;
  port: number;
}
const registry = JSON.parse(
  readFileSync(path.join(repoRoot, 'tools', 'stack', 'src', 'processes.generated.json'), 'utf8'),
) as RegistryEntry[];

/** A running service's base URL, as the local stack runs it (HERALD_<NAME>_PORT moves it). */
function serviceUrl(name: string): string {
  const entry = registry.find((s) => s.name === name);
  if (!entry) throw new Error(`no process ${name} in the registry`);
  const moved = process.env[`HERALD_${name.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_PORT`];
  return `http://127.0.0.1:${moved ? Number(moved) : entry.port}`;
}

/** The process's own SERVICE_TOKEN, as the local stack generated it. */
const tokenOf = (processName: string) =>
  readFileSync(path.join(dataDir, 'service-tokens', processName), 'utf8').trim();

const tenantId = randomUUID();
const contactId = randomUUID();
/** One internal route of each service, as its callers call it. */
const routes = {
  authTenant: { service: 'auth', method: 'GET', path: `/internal/v1/tenants/${tenantId}` },
  authRevokedKeys: { service: 'auth', method: 'GET', path: '/internal/v1/revoked-keys' },
  contactsResolve: {
    service: 'contacts',
    method: 'POST',
    path: '/internal/v1/identities/resolve',
    body: { tenantId, items: [] },
  },
  eventsExport: {
    service: 'events',
    method: 'GET',
    path: `/internal/v1/tenants/${tenantId}/contacts/${contactId}/export`,
  },
  eventsErase: {
    service: 'events',
    method: 'POST',
    path: `/internal/v1/tenants/${tenantId}/contacts/${contactId}/erase`,
  },
  billingSubscription: {
    service: 'billing',
    method: 'GET',
    path: `/internal/v1/tenants/${tenantId}/subscription`,
  },
  // A Tenant's deletion (a Tenant nobody created: nothing to delete, done).
  contactsDeleteTenant: {
    service: 'contacts',
    method: 'POST',
    path: `/internal/v1/tenants/${tenantId}/delete`,
  },
  eventsDeleteTenant: {
    service: 'events',
    method: 'POST',
    path: `/internal/v1/tenants/${tenantId}/delete`,
  },
  billingDeleteTenant: {
    service: 'billing',
    method: 'POST',
    path: `/internal/v1/tenants/${tenantId}/delete`,
  },
} as const;
type RouteName = keyof typeof routes;

async function callInternal(route: RouteName, token: string) {
  const spec = routes[route];
  const body = 'body' in spec ? JSON.stringify(spec.body) : undefined;
  return fetch(`${serviceUrl(spec.service)}${spec.path}`, {
    method: spec.method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body,
  });
}

describe('the internal routes on the local stack', () => {
  it('when a process calls a route of a service it calls for something else, then 403 forbidden naming it', async () => {
    // billing asks auth whether a Tenant exists, nothing else: the revocation list is not for it
    const res = await callInternal('authRevokedKeys', tokenOf('billing'));
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      code: 'forbidden',
      message: 'billing may not call GET /internal/v1/revoked-keys',
    });
  });

  it("when the contacts process's token calls the events service's Tenant deletion, which only auth may call, then 403 and nothing is done", async () => {
    const res = await callInternal('eventsDeleteTenant', tokenOf('contacts'));
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      code: 'forbidden',
      message: `contacts may not call POST /internal/v1/tenants/${tenantId}/delete`,
    });
  });

  it.each<[string, RouteName]>([
    // billing calls neither contacts nor events
    ['billing', 'contactsResolve'],
    ['billing', 'eventsExport'],
    ['billing', 'eventsErase'],
    // only the contacts service exports and erases a Contact's Events
    ['events', 'eventsExport'],
    ['events', 'eventsErase'],
    // only the events service resolves identities
    ['contacts', 'contactsResolve'],
    // only the auth service deletes a Tenant's data; billing calls no one but auth
    ['billing', 'contactsDeleteTenant'],
    ['billing', 'eventsDeleteTenant'],
  ])(
    "when the %s process's token calls %s, of a service that no route lets it call, then 401 and nothing is done",
    async (caller, route) => {
      const res = await callInternal(route, tokenOf(caller));
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({
        code: 'unauthenticated',
        message: 'missing or wrong service token',
      });
    },
  );

  it.each<[string, RouteName]>([
    ['billing', 'authTenant'],
    ['contacts', 'authTenant'],
    ['events', 'authRevokedKeys'],
    ['events', 'contactsResolve'],
    ['contacts', 'eventsExport'],
    ['events', 'billingSubscription'],
    ['auth', 'contactsDeleteTenant'],
    ['auth', 'eventsDeleteTenant'],
    ['auth', 'billingDeleteTenant'],
  ])(
    "when the %s process's token calls %s, which its manifest names it for, then it is let in",
    async (caller, route) => {
      const res = await callInternal(route, tokenOf(caller));
      // let in: the route's own answer (a Tenant nobody created is a 404 there), never 401/403
      expect([200, 404]).toContain(res.status);
      await res.arrayBuffer();
    },
  );

  it.each(Object.keys(routes) as RouteName[])(
    'when %s is called with the admin token or an unknown one, then 401 unauthenticated',
    async (route) => {
      for (const token of [adminToken(), `not-a-service-token-${randomUUID()}`]) {
        const res = await callInternal(route, token);
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe('Bearer realm="herald-internal"');
        expect(await res.json()).toEqual({
          code: 'unauthenticated',
          message: 'missing or wrong service token',
        });
      }
    },
  );
});
