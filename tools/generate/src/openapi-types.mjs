// TypeScript types of a part of Herald's OpenAPI document, with openapi-typescript: the SDK's of
// the public API (/v1), the console's of the operator API (/admin/v1). The document is generated
// from the services' zod schemas, so these types follow the schemas the services validate with.
import { resolve } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import prettier from 'prettier';

/**
 * openapi-typescript writes a component schema that refers to itself (a JSON value: `X[]` or
 * `{[key]: X}` within X) as an indexed access TypeScript refuses ("referenced directly or
 * indirectly in its own type annotation"; openapi-ts/openapi-typescript#1603). Such a
 * self-reference becomes `{}` (unknown): the first level keeps its type, the nested values are
 * `unknown`.
 */
function withoutSelfReferences(components) {
  if (!components?.schemas) return components;
  const cut = (node, ref) => {
    if (Array.isArray(node)) return node.map((item) => cut(item, ref));
    if (node === null || typeof node !== 'object') return node;
    if (node.$ref === ref) return {};
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, cut(value, ref)]));
  };
  const schemas = Object.fromEntries(
    Object.entries(components.schemas).map(([name, schema]) => [
      name,
      cut(schema, `#/components/schemas/${name}`),
    ]),
  );
  return { ...components, schemas };
}

/**
 * The types of the document's routes under `prefix`, with `header` (comment lines) first,
 * formatted as the repository's prettier formats `target`.
 * @param {import('openapi-typescript').OpenAPI3} document
 * @param {{ prefix: string, header: string, target: string }} options
 */
export async function apiTypes(document, { prefix, header, target }) {
  const paths = Object.fromEntries(
    Object.entries(document.paths ?? {}).filter(([route]) => route.startsWith(prefix)),
  );
  if (Object.keys(paths).length === 0) {
    throw new Error(
      `the OpenAPI document has no ${prefix} route: is it generated (npm run generate)?`,
    );
  }
  const part = { ...document, paths, components: withoutSelfReferences(document.components) };
  const text = header + astToString(await openapiTS(part));
  const config = (await prettier.resolveConfig(resolve(target))) ?? {};
  return prettier.format(text, { ...config, filepath: target });
}
