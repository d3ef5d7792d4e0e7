// The running local stack as a customer reaches it (through the ingress), and the stack's own
// controls (tools/stack/src/index.mjs) to stop and start one piece of its infrastructure.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const dataDir = path.resolve(repoRoot, process.env.HERALD_DATA_DIR || '.herald');

// ---------------------------------------------------------------------------------------------
// The stack's controls. tools/stack is plain JavaScript outside this package's tsconfig: imported by URL,
// typed here with what these tests use of it.

interface StatusRow {
  component: string;
  state: string;
  ok: boolean;
  expected: boolean;
}

export interface Stack {
  /** The ingress and the single Redis node, after HERALD_PORT and HERALD_REDIS_PORT. */
  ingressUrl: string;
  redisUrl: string;
  up(opts?: { build?: boolean; quiet?: boolean }): Promise<{ started: string[] }>;
  down(opts?: { only?: string[]; quiet?: boolean }): Promise<void>;
  status(): Promise<StatusRow[]>;
  isUp(): Promise<boolean>;
}

const stackModule = new URL('../../../tools/stack/src/index.mjs', import.meta.url).href;
export const stack = (await import(stackModule)) as Stack;

/** The ingress, exactly as a customer reaches it (the stack's own unless told otherwise). */
export const INGRESS = process.env.HERALD_INGRESS_URL ?? stack.ingressUrl;

/** Stops one component of the stack (e.g. 'kafka'); the data stays. */
export async function stop(component: string): Promise<void> {
  await stack.down({ only: [component], quiet: true });
  const row = (await stack.status()).find((r) => r.component === component);
  if (row?.ok) throw new Error(`${component} still answers after being stopped`);
}

/** Starts whatever is not running (idempotent) and checks the whole stack answers again. */
export async function restore(): Promise<void> {
  await stack.up({ build: false, quiet: true });
  if (!(await stack.isUp())) throw new Error('the stack is not up again');
}

// ---------------------------------------------------------------------------------------------
// The API, through the ingress

function adminToken(): string {
  return process.env.ADMIN_TOKEN || readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
}

/** Every request here gives up after 20 s: a hanging answer is a failure, not a wait. */
const TIMEOUT_MS = 20_000;

export async function admin(method: string, route: string, body?: unknown): Promise<Response> {
  return fetch(`${INGRESS}/admin/v1${route}`, {
    method,
    headers: {
      authorization: `Bearer ${adminToken()}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
}

export function call(method: string, route: string, token: string, body?: unknown) {
  return fetch(`${INGRESS}${route}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
}

export const ROUTES = ['by-contact-id', 'by-external-id', 'by-email', 'by-organization'] as const;
export type Route = (typeof ROUTES)[number];
export type EventBody = Record<string, unknown>;

export interface Contact {
  id: string;
  externalId: string;
  email: string;
}

/** A Tenant with a token holding every scope, and one organization. */
export interface Fixture {
  tenantId: string;
  token: string;
  organization: string;
}

export async function newFixture(name: string): Promise<Fixture> {
  const tenant = await admin('POST', '/tenants', { name });
  if (tenant.status !== 201) throw new Error(`tenant create answered ${tenant.status}`);
  const tenantId = (await tenant.json()).id as string;
  const key = await admin('POST', `/tenants/${tenantId}/api-keys`, {
    kind: 'secret',
    scopes: ['events:write', 'contacts:write', 'contacts:read', 'contacts:export'],
  });
  if (key.status !== 201) throw new Error(`key create answered ${key.status}`);
  const { clientId, secret } = await key.json();
  const exchanged = await fetch(`${INGRESS}/v1/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}` },
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  if (exchanged.status !== 200) throw new Error(`token exchange answered ${exchanged.status}`);
  const organization = `org-${randomUUID()}`;
  const org = await admin('POST', `/tenants/${tenantId}/organizations`, {
    externalId: organization,
  });
  if (org.status !== 201) throw new Error(`organization create answered ${org.status}`);
  return { tenantId, token: (await exchanged.json()).accessToken as string, organization };
}

export async function newContact(f: Fixture): Promise<Contact> {
  const externalId = `contact-${randomUUID()}`;
  const res = await call('PUT', `/v1/contacts/${externalId}`, f.token, {
    email: `${externalId}@example.com`,
  });
  if (res.status !== 201) throw new Error(`contact create answered ${res.status}`);
  return res.json<Contact>();
}

/** A valid Event for the route about `contact` (by organization: with it as the acting one). */
export function event(route: Route, f: Fixture, contact: Contact, fields: EventBody = {}) {
  const identity: Record<Route, EventBody> = {
    'by-contact-id': { contactId: contact.id },
    'by-external-id': { contactExternalId: contact.externalId },
    'by-email': { contactEmail: contact.email },
    'by-organization': { organizationExternalId: f.organization, contactId: contact.id },
  };
  return {
    ...identity[route],
    eventName: 'Order Completed',
    occurredAt: new Date().toISOString(),
    ...fields,
  };
}

export const record = (f: Fixture, route: Route, body: unknown) =>
  call('POST', `/v1/events/${route}`, f.token, body);

export interface ExportedEvent {
  id: string;
  eventName: string;
  dedupKey: string | null;
}

/** The Event lines of the Contact's export file. */
export async function exportedEvents(f: Fixture, contactId: string): Promise<ExportedEvent[]> {
  const res = await call('GET', `/v1/contacts/by-id/${contactId}/export`, f.token);
  if (res.status !== 200) throw new Error(`export answered ${res.status}`);
  return (await res.text())
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; data: ExportedEvent })
    .filter((l) => l.type === 'event')
    .map((l) => l.data);
}

/** How many Events of the export carry each dedupKey. */
export function countByDedupKey(events: ExportedEvent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of events) if (e.dedupKey) counts[e.dedupKey] = (counts[e.dedupKey] ?? 0) + 1;
  return counts;
}
