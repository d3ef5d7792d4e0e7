// The one list of Herald's own processes that the local stack runs, generated from the
// services' manifests (services/*/src/manifest.ts) into processes.generated.json by
// `npm run generate`: edit the manifest, never the JSON. Read as JSON because the stack uses
// Node built-ins only and runs before anything is built.
// Each entry: `name`; `port` (its loopback port behind the nginx ingress); `metricsPort` (its
// Prometheus endpoint's loopback port, METRICS_PORT); `database` (the
// PostgreSQL database it uses, null for none); `entry` and `migrate` (files from the repository
// root); `nodeArgs` (before the entry, resolved from the service's package folder, its working
// directory); `niceness` (how far from the stack's own nice value it runs, when not 0); `secrets`
// (the stack's secrets it gets as environment variables: ADMIN_TOKEN,
// AUTH_SIGNING_KEYS, SERVICE_TOKEN (its own, .herald/service-tokens/<name>), SERVICE_CALLERS
// (the sha256 of each of its `callers`' tokens); an unlisted one is removed from its environment
// even when the caller's shell has it); `callers` (the processes that may call its internal
// routes); `holdsContactData` (it answers the internal export and erase
// routes; the contacts service gets the base URLs of those that are built in
// CONTACT_DATA_SERVICES); `after` (services earlier in the list whose start, migration included,
// it waits for); `routes` (what nginx sends to it, in order: {exact}, {prefix} or {regex}, as
// nginx locations `=`, `^~` and `~`; regexes are tried in list order); `allow` (the paths its
// routes take, in Express syntax, each with the methods its 405 names there: nginx's own 405s
// name them too); `topics` (Kafka topics the stack creates if missing: {name, partitions,
// config}).
import fs from 'node:fs';

export const services = JSON.parse(
  fs.readFileSync(new URL('./processes.generated.json', import.meta.url), 'utf8'),
);
