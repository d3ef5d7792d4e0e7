// The official Kubernetes JSON schemas (the "standalone-strict" flavour kubeconform reads), made
// offline from the OpenAPI v2 document that the Kubernetes source ships (api/openapi-spec/
// swagger.json), taken from the Go module proxy at a pinned version: nothing is fetched from
// anywhere else at run time. The conversion mirrors openapi2jsonschema with
// `--expanded --kubernetes --stand-alone --strict`, which is how the kubernetes-json-schema
// registry that kubeconform defaults to is built: every object with properties refuses unknown
// fields, IntOrString and Quantity become oneOf, apiVersion/kind are enums, optional fields
// accept null, and every $ref is inlined so each file stands alone.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const KUBERNETES_VERSION = '1.35.4';
const SCHEMA_MODULE = 'k8s.io/kubernetes';
// Types whose schemas describe JSON schemas themselves (recursive): the registry skips them too.
const UNSUPPORTED = new Set([
  'jsonschemaprops',
  'jsonschemapropsorarray',
  'customresourcevalidation',
  'customresourcedefinition',
  'customresourcedefinitionspec',
  'customresourcedefinitionlist',
  'jsonschemapropsorstringarray',
  'jsonschemapropsorbool',
]);

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
// Python truthiness of a dict or list, as the original script tests it.
const truthy = (v) => (Array.isArray(v) ? v.length > 0 : isObject(v) && Object.keys(v).length > 0);

function denyAdditionalProperties(data) {
  if (Array.isArray(data)) {
    data.forEach(denyAdditionalProperties);
  } else if (isObject(data)) {
    if ('properties' in data && !('additionalProperties' in data)) {
      data.additionalProperties = false;
    }
    Object.values(data).forEach(denyAdditionalProperties);
  }
  return data;
}

function replaceIntOrString(data) {
  if (!isObject(data)) return data;
  const out = {};
  for (const [key, value] of Object.entries(data)) {
    if (isObject(value)) {
      out[key] =
        value.format === 'int-or-string'
          ? { oneOf: [{ type: 'string' }, { type: 'integer' }] }
          : replaceIntOrString(value);
    } else if (Array.isArray(value)) {
      out[key] = value.map(replaceIntOrString);
    } else {
      out[key] = value;
    }
  }
  return out;
}

// A `type` becomes [type, "null"] unless the schema two levels up lists required fields.
function allowNullOptionalFields(data, parent, grandParent) {
  if (!isObject(data)) return data;
  const out = {};
  for (const [key, value] of Object.entries(data)) {
    if (isObject(value)) {
      out[key] = allowNullOptionalFields(value, data, parent);
    } else if (Array.isArray(value)) {
      out[key] = value.map((item) => allowNullOptionalFields(item, value, parent));
    } else if (key === 'type' && typeof value === 'string' && value !== 'null') {
      const hasRequired =
        truthy(grandParent) &&
        (Array.isArray(grandParent) ? grandParent.includes('required') : 'required' in grandParent);
      out[key] = hasRequired ? value : [value, 'null'];
    } else {
      out[key] = value;
    }
  }
  return out;
}

class RecursiveSchemaError extends Error {}

function inlineRefs(node, definitions, seen = []) {
  if (Array.isArray(node)) return node.map((item) => inlineRefs(item, definitions, seen));
  if (!isObject(node)) return node;
  if (typeof node.$ref === 'string') {
    const name = node.$ref.replace(/^#\/definitions\//, '');
    if (seen.includes(name)) throw new RecursiveSchemaError(name);
    const target = definitions[name];
    if (!target) throw new Error(`unknown $ref ${node.$ref}`);
    return inlineRefs(target, definitions, [...seen, name]);
  }
  const out = {};
  for (const [key, value] of Object.entries(node)) out[key] = inlineRefs(value, definitions, seen);
  return out;
}

function prepareDefinitions(swagger) {
  const definitions = structuredClone(swagger.definitions);
  definitions['io.k8s.apimachinery.pkg.util.intstr.IntOrString'] = {
    oneOf: [{ type: 'string' }, { type: 'integer' }],
  };
  // Not valid in the API, but every Kubernetes tool accepts a number for a Quantity.
  definitions['io.k8s.apimachinery.pkg.api.resource.Quantity'] = {
    oneOf: [{ type: 'string' }, { type: 'number' }],
  };
  for (const def of Object.values(definitions)) {
    for (const gvk of def['x-kubernetes-group-version-kind'] ?? []) {
      const props = def.properties ?? {};
      const apiVersion = gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version;
      for (const [field, value] of [
        ['apiVersion', apiVersion],
        ['kind', gvk.kind],
      ]) {
        if (!props[field]) continue;
        props[field].enum ??= [];
        if (!props[field].enum.includes(value)) props[field].enum.push(value);
      }
    }
  }
  return denyAdditionalProperties(definitions);
}

/** Writes `<dir>/v<version>-standalone-strict/<kind>[-<group>]-<version>.json` for every type. */
export function writeSchemas(swagger, dir, version = KUBERNETES_VERSION) {
  const definitions = prepareDefinitions(swagger);
  const out = path.join(dir, `v${version}-standalone-strict`);
  fs.mkdirSync(out, { recursive: true });
  let written = 0;
  for (const [title, definition] of Object.entries(definitions)) {
    const parts = title.split('.');
    const kind = parts.at(-1).toLowerCase();
    const group = parts.at(-3).toLowerCase();
    const apiVersion = parts.at(-2).toLowerCase();
    // the registry leaves out the long-deprecated io.k8s.kubernetes.pkg.* aliases
    if (parts[2] === 'kubernetes' && parts[3] === 'pkg') continue;
    if (UNSUPPORTED.has(kind)) continue;
    let schema = { ...definition, $schema: 'http://json-schema.org/schema#' };
    schema.type ??= 'object';
    schema.additionalProperties = false;
    try {
      schema = inlineRefs(schema, definitions);
    } catch (error) {
      // A type that contains itself cannot stand alone; the registry has no file for it either.
      if (error instanceof RecursiveSchemaError) continue;
      throw error;
    }
    if (schema.properties) {
      schema.properties = allowNullOptionalFields(
        replaceIntOrString(denyAdditionalProperties(schema.properties)),
      );
    }
    const name = ['core', 'api'].includes(group)
      ? `${kind}-${apiVersion}`
      : `${kind}-${group}-${apiVersion}`;
    fs.writeFileSync(path.join(out, `${name}.json`), JSON.stringify(schema, null, 2));
    written += 1;
  }
  return written;
}

/**
 * The schema directory for kubeconform's `-schema-location`, made once per pinned version under
 * `toolsDir` (a `.complete` marker guards against a half-written directory).
 */
export function ensureSchemas(toolsDir) {
  const dir = path.join(toolsDir, 'k8s-schemas');
  const marker = path.join(dir, `v${KUBERNETES_VERSION}.complete`);
  if (!fs.existsSync(marker)) {
    const started = Date.now();
    const download = spawnSync(
      'go',
      ['mod', 'download', '-json', `${SCHEMA_MODULE}@v${KUBERNETES_VERSION}`],
      { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
    );
    if (download.status !== 0) {
      throw new Error(
        `go mod download ${SCHEMA_MODULE} failed:\n${download.stdout}${download.stderr}`,
      );
    }
    const moduleDir = JSON.parse(download.stdout).Dir;
    const swagger = JSON.parse(
      fs.readFileSync(path.join(moduleDir, 'api', 'openapi-spec', 'swagger.json'), 'utf8'),
    );
    fs.rmSync(path.join(dir, `v${KUBERNETES_VERSION}-standalone-strict`), {
      recursive: true,
      force: true,
    });
    const count = writeSchemas(swagger, dir);
    fs.writeFileSync(marker, `${count}\n`);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    process.stderr.write(
      `chart-check: made ${count} Kubernetes ${KUBERNETES_VERSION} schemas in ${seconds}s\n`,
    );
  }
  return {
    dir,
    location: path.join(
      dir,
      '{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}',
      '{{ .ResourceKind }}{{ .KindSuffix }}.json',
    ),
  };
}
