import type { ApiRequest } from './client.js';

/**
 * The command table: every route of the operator API, one entry each. This is
 * the one place to read or change what a command sends.
 */

/** One option of a command. Every command option takes a value (`--tenant <id>`). */
export interface Flag {
  /** Placeholder shown in usage, e.g. `<id>`. */
  readonly value: string;
  readonly help: string;
  readonly required?: boolean;
  readonly choices?: readonly string[];
  /** A value must match it, e.g. a whole number; `describes` says how in the usage error. */
  readonly pattern?: { readonly regex: RegExp; readonly describes: string };
  readonly default?: string;
}

/** The options' values after parsing: required ones are present and non-empty. */
export type Values = Readonly<Record<string, string | undefined>>;

export interface Command {
  readonly group: string;
  readonly action: string;
  readonly summary: string;
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /**
   * `{flag}` placeholders (in the query too) are filled with that (required) option's value,
   * percent-encoded.
   */
  readonly path: string;
  readonly flags: Readonly<Record<string, Flag>>;
  /** Options sent in the query string when given: option name → query parameter name. */
  readonly query?: Readonly<Record<string, string>>;
  /** The answer is a file (JSON Lines), printed as it came. */
  readonly raw?: boolean;
  /** The answer is a stream of Server-Sent Events, printed one JSON line each until Ctrl-C. */
  readonly stream?: boolean;
  /** The JSON body; commands without one send none. `undefined` members are left out. */
  readonly body?: (values: Values) => Record<string, unknown>;
  readonly example: string;
}

const tenant: Flag = { value: '<id>', help: 'the tenant id', required: true };

/** `a, b,,c` → `['a', 'b', 'c']`. */
export function splitList(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

export const commands: readonly Command[] = [
  {
    group: 'tenants',
    action: 'create',
    summary: 'Create a tenant.',
    method: 'POST',
    path: '/admin/v1/tenants',
    flags: { name: { value: '<name>', help: 'the tenant name', required: true } },
    body: (v) => ({ name: v.name }),
    example: 'herald-admin tenants create --name "Acme Inc" --get id',
  },
  {
    group: 'tenants',
    action: 'list',
    summary:
      "List tenants, newest first, a page at a time; the answer's nextCursor, given as --cursor, is the next page (null: the last).",
    method: 'GET',
    path: '/admin/v1/tenants',
    flags: {
      search: { value: '<text>', help: 'a part of the name (any case), or the whole id' },
      limit: {
        value: '<n>',
        help: 'tenants per page, 1 to 100 (the API default: 50)',
        pattern: { regex: /^[0-9]+$/, describes: 'a whole number' },
      },
      cursor: { value: '<cursor>', help: "the previous page's nextCursor" },
    },
    query: { search: 'search', limit: 'limit', cursor: 'cursor' },
    example: 'herald-admin tenants list --search acme --get tenants.0.id',
  },
  {
    group: 'tenants',
    action: 'show',
    summary: 'Show a tenant: its id, name and when it was created.',
    method: 'GET',
    path: '/admin/v1/tenants/{tenant}',
    flags: { tenant },
    example: 'herald-admin tenants show --tenant "$TENANT" --get name',
  },
  {
    group: 'tenants',
    action: 'delete',
    summary:
      'Delete a tenant and everything it holds (keys, contacts, events, organizations, billing), permanently. Its keys stop working at once; the rest goes on in the background: run the command again to see, it answers "deleting" until the tenant is gone, then not_found.',
    method: 'DELETE',
    path: '/admin/v1/tenants/{tenant}?confirm={confirm}',
    flags: {
      tenant,
      confirm: {
        value: '<id>',
        help: 'the tenant id again: without it, or with another, nothing is deleted',
        required: true,
      },
    },
    example: 'herald-admin tenants delete --tenant "$TENANT" --confirm "$TENANT"',
  },
  {
    group: 'keys',
    action: 'create',
    summary: "Create an API key. A secret key's secret is shown once, in this answer.",
    method: 'POST',
    path: '/admin/v1/tenants/{tenant}/api-keys',
    flags: {
      tenant,
      kind: {
        value: '<kind>',
        help: 'the key kind',
        choices: ['secret', 'publishable'],
        default: 'secret',
      },
      scopes: {
        value: '<a,b>',
        help: 'comma-separated scopes (default: the API default for the kind)',
      },
      name: { value: '<name>', help: 'a label for the key' },
      'identifier-lookup': {
        value: '<yes|no>',
        help: 'publishable keys: may also record Events by email, externalId or organization, which tells anyone holding the key who is a Contact',
        choices: ['yes', 'no'],
      },
      'allowed-origins': {
        value: '<a,b>',
        help: 'publishable keys: the browser Origins its tokens work from, e.g. https://shop.example.com (default: any)',
      },
    },
    body: (v) => ({
      kind: v.kind,
      scopes: v.scopes === undefined ? undefined : splitList(v.scopes),
      name: v.name,
      identifierLookup:
        v['identifier-lookup'] === undefined ? undefined : v['identifier-lookup'] === 'yes',
      allowedOrigins:
        v['allowed-origins'] === undefined ? undefined : splitList(v['allowed-origins']),
    }),
    example:
      'herald-admin keys create --tenant "$TENANT" --scopes events:write,contacts:read --json',
  },
  {
    group: 'keys',
    action: 'list',
    summary:
      "List a tenant's keys, revoked ones included (revokedAt), newest first; secrets are never shown again.",
    method: 'GET',
    path: '/admin/v1/tenants/{tenant}/api-keys',
    flags: { tenant },
    example: 'herald-admin keys list --tenant "$TENANT" --get apiKeys.0.clientId',
  },
  {
    group: 'keys',
    action: 'revoke',
    summary: 'Revoke an API key: it can no longer exchange for tokens.',
    method: 'POST',
    path: '/admin/v1/tenants/{tenant}/api-keys/{client-id}/revoke',
    flags: {
      tenant,
      'client-id': { value: '<clientId>', help: 'the key ClientID', required: true },
    },
    example: 'herald-admin keys revoke --tenant "$TENANT" --client-id ck_0123456789abcdefABCDEF',
  },
  {
    group: 'organizations',
    action: 'create',
    summary: 'Create an organization in a tenant.',
    method: 'POST',
    path: '/admin/v1/tenants/{tenant}/organizations',
    flags: {
      tenant,
      'external-id': { value: '<x>', help: 'the organization externalId', required: true },
      name: { value: '<name>', help: 'the organization name' },
    },
    body: (v) => ({ externalId: v['external-id'], name: v.name }),
    example:
      'herald-admin organizations create --tenant "$TENANT" --external-id org-42 --name Globex',
  },
  {
    group: 'organizations',
    action: 'list',
    summary:
      "List a tenant's organizations by externalId, a page at a time; the answer's nextCursor, given as --cursor, is the next page.",
    method: 'GET',
    path: '/admin/v1/tenants/{tenant}/organizations',
    flags: {
      tenant,
      limit: {
        value: '<n>',
        help: 'per page, 1 to 100 (the API default: 50)',
        pattern: { regex: /^[0-9]+$/, describes: 'a whole number' },
      },
      cursor: { value: '<cursor>', help: "the previous page's nextCursor" },
    },
    query: { limit: 'limit', cursor: 'cursor' },
    example: 'herald-admin organizations list --tenant "$TENANT" --get organizations.0.externalId',
  },
  {
    group: 'contacts',
    action: 'find',
    summary:
      "Find a tenant's contacts whose externalId, email (any case) or id is the given identity.",
    method: 'GET',
    path: '/admin/v1/tenants/{tenant}/contacts?identity={identity}',
    flags: {
      tenant,
      identity: {
        value: '<x>',
        help: 'an externalId, an email address or a contact id',
        required: true,
      },
    },
    example:
      'herald-admin contacts find --tenant "$TENANT" --identity ada@example.com --get contacts.0.id',
  },
  {
    group: 'contacts',
    action: 'export',
    summary:
      'Everything Herald holds about a contact (a GDPR access request), as JSON Lines: the contact, then each of its events.',
    method: 'GET',
    path: '/admin/v1/tenants/{tenant}/contacts/{contact}/export',
    flags: { tenant, contact: { value: '<id>', help: 'the contact id', required: true } },
    raw: true,
    example:
      'herald-admin contacts export --tenant "$TENANT" --contact "$CONTACT" > contact.ndjson',
  },
  {
    group: 'contacts',
    action: 'erase',
    summary:
      'Erase a contact and its events everywhere Herald keeps them (a GDPR erasure request), permanently.',
    method: 'POST',
    path: '/admin/v1/tenants/{tenant}/contacts/{contact}/erase',
    flags: { tenant, contact: { value: '<id>', help: 'the contact id', required: true } },
    example: 'herald-admin contacts erase --tenant "$TENANT" --contact "$CONTACT"',
  },
  {
    group: 'billing',
    action: 'show',
    summary: "Show a tenant's subscription state and consecutive payment failures.",
    method: 'GET',
    path: '/admin/v1/tenants/{tenant}/billing',
    flags: { tenant },
    example: 'herald-admin billing show --tenant "$TENANT" --get state',
  },
  {
    group: 'billing',
    action: 'payment-failed',
    summary: 'Record a failed payment (enough in a row suspend the tenant).',
    method: 'POST',
    path: '/admin/v1/tenants/{tenant}/billing/payment-failures',
    flags: { tenant },
    example: 'herald-admin billing payment-failed --tenant "$TENANT"',
  },
  {
    group: 'billing',
    action: 'payment-updated',
    summary: 'Record updated payment details: the tenant is active again.',
    method: 'POST',
    path: '/admin/v1/tenants/{tenant}/billing/payment-details',
    flags: { tenant },
    example: 'herald-admin billing payment-updated --tenant "$TENANT"',
  },
  {
    group: 'event-names',
    action: 'list',
    summary: 'List the event names recorded in a tenant, with when each was first seen.',
    method: 'GET',
    path: '/admin/v1/tenants/{tenant}/event-names',
    flags: { tenant },
    example: 'herald-admin event-names list --tenant "$TENANT"',
  },
  {
    group: 'events',
    action: 'live',
    summary:
      "Follow a tenant's events as they are recorded, one JSON line each, until Ctrl-C (at most 20 a second; a line on stderr counts those left out).",
    method: 'GET',
    path: '/admin/v1/tenants/{tenant}/events/live',
    flags: { tenant },
    stream: true,
    example: 'herald-admin events live --tenant "$TENANT"',
  },
  {
    group: 'event-retention',
    action: 'show',
    summary:
      "Show how long a tenant's Events are kept, in days, and whether that is its own retention or the default.",
    method: 'GET',
    path: '/admin/v1/tenants/{tenant}/event-retention',
    flags: { tenant },
    example: 'herald-admin event-retention show --tenant "$TENANT" --get days',
  },
  {
    group: 'event-retention',
    action: 'set',
    summary:
      "Set how long a tenant's Events are kept. Shortening it deletes the older Events at the events service's next sweep, for good.",
    method: 'PUT',
    path: '/admin/v1/tenants/{tenant}/event-retention',
    flags: {
      tenant,
      days: {
        value: '<n|default>',
        help: 'whole days from when an Event was recorded (1 to 3650), or "default" for the installation default',
        required: true,
        pattern: { regex: /^(default|[0-9]+)$/, describes: 'a whole number of days or "default"' },
      },
    },
    body: (v) => ({ days: v.days === 'default' ? null : Number(v.days) }),
    example: 'herald-admin event-retention set --tenant "$TENANT" --days 90',
  },
];

/** The request a command sends, for values that passed parsing. */
export function requestOf(command: Command, values: Values): ApiRequest {
  const path = command.path.replace(/\{([a-z-]+)\}/g, (_match, name: string) =>
    encodeURIComponent(values[name] ?? ''),
  );
  const query = new URLSearchParams(
    Object.entries(command.query ?? {}).flatMap(([flag, name]): [string, string][] => {
      const value = values[flag];
      return value === undefined ? [] : [[name, value]];
    }),
  ).toString();
  return {
    method: command.method,
    path: query === '' ? path : `${path}?${query}`,
    body: command.body?.(values),
  };
}
