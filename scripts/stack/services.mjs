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
export const services = [
  {
    name: 'auth',
    port: 18081,
    database: 'herald_auth',
    entry: 'services/auth/dist/index.js',
    migrate: 'services/auth/dist/migrate.js',
    nodeArgs: ['--import', '@herald/telemetry/register'],
    routes: [
      { exact: '/v1/token' },
      // tenant create, API key create, API key revoke
      { regex: '^/admin/v1/tenants(/[^/]+/api-keys(/.*)?)?/?$' },
    ],
  },
];
