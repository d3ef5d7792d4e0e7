// The one list of Herald's own processes that the local stack runs.
// `port` is the service's loopback port behind the nginx ingress; `database` is the
// PostgreSQL database the service owns (null when it has none).
// Optional fields (read by scripts/stack/*):
//   `routes`: what the nginx ingress sends to this service, in order; each one of
//             {exact: '/path'}, {prefix: '/path/'} or {regex: '^/...$'} (nginx location syntax:
//             exact `=`, prefix `^~`, regex `~`; regexes are tried in registry order).
//   `nodeArgs`: extra `node` arguments before the entry, e.g. ['--import', '@herald/telemetry/register']
//             (resolved from the service's package folder, which is its working directory).
//   `topics`: Kafka topics the stack creates if missing: [{name, partitions?, config?: {k: v}}].
//   `holdsContactData`: the service holds data about Contacts and answers the internal export and
//             erase routes (docs/contacts.md); the contacts service gets the base URLs of those
//             that are built in CONTACT_DATA_SERVICES.
//   `after`: names of services earlier in the registry whose start (migration included) this one
//             waits for; the others start in parallel.
//   `secrets`: the stack's secrets this service gets as environment variables, by name, from
//             ADMIN_TOKEN (the operator token; services with /admin routes),
//             SERVICE_TOKEN (opens and calls the /internal routes between services) and
//             AUTH_SIGNING_KEYS (the private token-signing keys; only the service that signs
//             tokens). Default none; an unlisted secret is removed from the service's environment
//             even when the caller's shell has it.
export const services = [
  {
    name: 'auth',
    port: 18081,
    database: 'herald_auth',
    entry: 'services/auth/dist/index.js',
    migrate: 'services/auth/dist/migrate.js',
    nodeArgs: ['--import', '@herald/telemetry/register'],
    secrets: ['ADMIN_TOKEN', 'AUTH_SIGNING_KEYS', 'SERVICE_TOKEN'],
    routes: [
      { exact: '/v1/token' },
      // tenant create, API key create, API key revoke
      { regex: '^/admin/v1/tenants(/[^/]+/api-keys(/.*)?)?/?$' },
    ],
  },
  {
    name: 'contacts',
    port: 18082,
    database: 'herald_contacts',
    entry: 'services/contacts/dist/index.js',
    migrate: 'services/contacts/dist/migrate.js',
    nodeArgs: ['--import', '@herald/telemetry/register'],
    secrets: ['ADMIN_TOKEN', 'SERVICE_TOKEN'],
    routes: [
      { exact: '/v1/contacts' },
      { prefix: '/v1/contacts/' },
      { regex: '^/admin/v1/tenants/[^/]+/organizations/?$' },
    ],
  },
  {
    name: 'events',
    port: 18083,
    database: 'herald_events',
    entry: 'services/events/dist/index.js',
    migrate: 'services/events/dist/migrate.js',
    nodeArgs: ['--import', '@herald/telemetry/register'],
    secrets: ['ADMIN_TOKEN', 'SERVICE_TOKEN'],
    holdsContactData: true,
    routes: [{ prefix: '/v1/events/' }, { regex: '^/admin/v1/tenants/[^/]+/event-names/?$' }],
  },
  {
    // Subscription state (decisions G): PostgreSQL, mirrored to Redis for every service's write
    // check; its outbox relay runs inside it.
    name: 'billing',
    port: 18084,
    database: 'herald_billing',
    entry: 'services/billing/dist/index.js',
    migrate: 'services/billing/dist/migrate.js',
    nodeArgs: ['--import', '@herald/telemetry/register'],
    secrets: ['ADMIN_TOKEN', 'SERVICE_TOKEN'],
    routes: [{ regex: '^/admin/v1/tenants/[^/]+/billing(/.*)?$' }],
    topics: [
      {
        name: 'herald.subscriptions.changed',
        partitions: 6,
        config: { 'cleanup.policy': 'compact' },
      },
    ],
  },
  {
    // The events outbox relay: its own process (its own Deployment), publishing to Kafka. It has
    // no migration and no routes: it starts once events has migrated herald_events, and only
    // answers its probes (/healthz, /readyz) on its port.
    name: 'events-relay',
    port: 18085,
    database: 'herald_events',
    entry: 'services/events/dist/relay.js',
    nodeArgs: ['--import', '@herald/telemetry/register'],
    after: ['events'],
  },
];
