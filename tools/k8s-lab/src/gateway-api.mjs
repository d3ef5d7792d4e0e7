// The Gateway API's CRDs, from its Go module (sigs.k8s.io/gateway-api, served by the Go module
// proxy like the chart check's Kubernetes schemas): the standard channel's YAML files, applied to
// the test cluster by `npm run test:k8s`, and the HTTPRoute's schema in the form kubeconform
// reads, made from the same CRD for `npm run chart:check`.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

export const GATEWAY_API_MODULE = 'sigs.k8s.io/gateway-api';
export const GATEWAY_API_VERSION = 'v1.6.3';

/** The module's directory in Go's module cache, downloaded once. */
function moduleDir() {
  const download = spawnSync(
    'go',
    ['mod', 'download', '-json', `${GATEWAY_API_MODULE}@${GATEWAY_API_VERSION}`],
    { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
  );
  const error = /** @type {NodeJS.ErrnoException | undefined} */ (download.error);
  if (error?.code === 'ENOENT') throw new Error('`go` is not on PATH');
  if (download.status !== 0) {
    throw new Error(
      `go mod download ${GATEWAY_API_MODULE}@${GATEWAY_API_VERSION} failed:\n` +
        `${download.stdout}${download.stderr}`,
    );
  }
  return JSON.parse(download.stdout).Dir;
}

/** The standard channel's CRD files (GatewayClass, Gateway, HTTPRoute, ...), absolute paths. */
export function ensureGatewayApiCrds() {
  const dir = path.join(moduleDir(), 'config', 'crd', 'standard');
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') && f.startsWith('gateway.networking.k8s.io_'))
    .sort()
    .map((f) => path.join(dir, f));
  if (!files.length) throw new Error(`no CRD files in ${dir}`);
  return { version: GATEWAY_API_VERSION, files };
}

/**
 * Strict, as kubeconform's own Kubernetes schemas are: every object that lists its properties
 * refuses others, so a misspelt field fails the check instead of passing unread.
 */
function strict(node) {
  if (Array.isArray(node)) return node.map(strict);
  if (!node || typeof node !== 'object') return node;
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] = key === 'properties' ? mapValues(value, strict) : strict(value);
  }
  if (out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

const mapValues = (object, fn) =>
  Object.fromEntries(Object.entries(object).map(([k, v]) => [k, fn(v)]));

/**
 * Writes `httproute-gateway-v1.json` (kubeconform's `<kind>-<group's first part>-<version>`
 * name) into `dir` from the CRD's v1 openAPIV3Schema, once per pinned version; returns `dir`.
 */
export function ensureHttpRouteSchema(dir) {
  const file = path.join(dir, 'httproute-gateway-v1.json');
  const marker = path.join(dir, `gateway-api-${GATEWAY_API_VERSION}.complete`);
  if (fs.existsSync(marker) && fs.existsSync(file)) return dir;
  const crdFile = ensureGatewayApiCrds().files.find((f) => f.endsWith('_httproutes.yaml'));
  const crd = parseAllDocuments(fs.readFileSync(crdFile, 'utf8'))
    .map((d) => d.toJS())
    .find((d) => d?.kind === 'CustomResourceDefinition');
  const v1 = crd.spec.versions.find((v) => v.name === 'v1');
  const schema = strict(v1.schema.openAPIV3Schema);
  // apiVersion, kind and metadata are the API server's; kubeconform checks them as it does for
  // every kind, and the CRD leaves metadata open.
  schema.properties.apiVersion = { type: 'string', enum: ['gateway.networking.k8s.io/v1'] };
  schema.properties.kind = { type: 'string', enum: ['HTTPRoute'] };
  schema.properties.metadata = { type: 'object' };
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(schema, null, 1)}\n`);
  fs.writeFileSync(marker, `${GATEWAY_API_VERSION}\n`);
  return dir;
}
