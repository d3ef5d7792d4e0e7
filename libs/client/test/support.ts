// Integration test support: the local stack through its ingress, as a customer reaches it.
// Tenants, keys and organizations are made with the operator API (admin token), as the e2e
// tests do (tests/e2e/test/support.ts); what was recorded is counted in the events service's
// own database (`herald_events`), read only.
import { createPool, type Pool } from '@herald/db';
import { stackAdminToken, testDatabaseUrl } from '@herald/testing';

/** The ingress, exactly as a customer reaches it. */
export const INGRESS = (process.env.HERALD_INGRESS_URL ?? 'http://127.0.0.1:8080').replace(
  /\/+$/,
  '',
);

export const ALL_SCOPES = [
  'events:write',
  'contacts:write',
  'contacts:read',
  'contacts:export',
  'contacts:erase',
];

/**
 * An operator API call. The stack is shared and its services are restarted now and then (a
 * restart takes seconds): a 502/503/504 or a refused connection is tried again, for a minute.
 */
export async function admin(method: string, route: string, body?: unknown): Promise<Response> {
  const until = Date.now() + 60_000;
  for (;;) {
    try {
      const res = await fetch(`${INGRESS}/admin/v1${route}`, {
        method,
        headers: {
          authorization: `Bearer ${stackAdminToken()}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (![502, 503, 504].includes(res.status) || Date.now() > until) return res;
      await res.arrayBuffer();
    } catch (error) {
      if (Date.now() > until) throw error;
    }
    await sleep(500);
  }
}

async function created<T>(res: Response, what: string): Promise<T> {
  if (res.status !== 201) throw new Error(`${what} answered ${res.status}: ${await res.text()}`);
  return res.json<T>();
}

export async function newTenant(name = 'SDK test tenant'): Promise<string> {
  return (await created<{ id: string }>(await admin('POST', '/tenants', { name }), 'tenant')).id;
}

export interface Key {
  clientId: string;
  secret?: string;
}

export async function newSecretKey(tenantId: string, scopes = ALL_SCOPES): Promise<Key> {
  return created<Key>(
    await admin('POST', `/tenants/${tenantId}/api-keys`, { kind: 'secret', scopes }),
    'secret key',
  );
}

export async function newPublishableKey(tenantId: string): Promise<Key> {
  return created<Key>(
    await admin('POST', `/tenants/${tenantId}/api-keys`, { kind: 'publishable' }),
    'publishable key',
  );
}

export async function newOrganization(tenantId: string, externalId: string): Promise<string> {
  await created(
    await admin('POST', `/tenants/${tenantId}/organizations`, { externalId }),
    'organization',
  );
  return externalId;
}

/** Read-only access to the events service's database of the running stack. */
export function eventsDatabase(): Pool {
  return createPool({
    connectionString: testDatabaseUrl('herald_events'),
    applicationName: 'herald-client-test',
    max: 2,
  });
}

/** How many Events the Tenant has recorded under each of these dedupKeys. */
export async function recordedByDedupKey(
  db: Pool,
  tenantId: string,
  dedupKeys: readonly string[],
): Promise<Map<string, number>> {
  const { rows } = await db.query<{ dedup_key: string; n: string }>(
    `select dedup_key, count(*) as n from events
      where tenant_id = $1 and dedup_key = any($2::text[]) group by dedup_key`,
    [tenantId, dedupKeys],
  );
  const counts = new Map(dedupKeys.map((key) => [key, 0]));
  for (const row of rows) counts.set(row.dedup_key, Number(row.n));
  return counts;
}

/** Every Event the Tenant has recorded. */
export async function recordedInTenant(db: Pool, tenantId: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    'select count(*) as n from events where tenant_id = $1',
    [tenantId],
  );
  return Number(rows[0]!.n);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
