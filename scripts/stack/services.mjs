// The one list of Herald's own processes that the local stack runs.
// `port` is the service's loopback port behind the nginx ingress; `database` is the
// PostgreSQL database the service owns (null when it has none).
export const services = [
  {
    name: 'auth',
    port: 18081,
    database: 'herald_auth',
    entry: 'services/auth/dist/index.js',
    migrate: 'services/auth/dist/migrate.js',
  },
];
