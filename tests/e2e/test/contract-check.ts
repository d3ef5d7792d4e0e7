// The contract check: every answer an end-to-end test receives through the ingress (by `fetch`)
// is checked against the served OpenAPI document. An undocumented status, a 405 without Allow,
// or a JSON body its schema refuses fails the test that received it.
import { afterEach } from '@jest/globals';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { openApiDocument } from '@herald/api-reference';
import { INGRESS } from './support.js';

interface Answer {
  content?: Record<string, { schema: unknown }>;
}
interface Operation {
  responses: Record<string, Answer>;
}
type Document = { paths: Record<string, Record<string, Operation>> };
/** What the check reads of an answer. */
interface Answered {
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}

const document = openApiDocument() as unknown as Document;
/** What this check uses of Ajv (its own typings do not resolve under the linter's parser). */
interface Validator {
  addSchema(schema: object, key: string): unknown;
  getSchema(ref: string): Validate | undefined;
  compile(schema: object): Validate;
  errorsText(errors: unknown): string;
}
type Validate = ((data: unknown) => boolean) & { errors?: unknown };

const addFormats = addFormatsModule as unknown as (ajv: Validator) => void;
const ajv = new Ajv2020({
  strict: false,
  allErrors: true,
  validateFormats: true,
}) as unknown as Validator;
addFormats(ajv);
ajv.addSchema(document, 'openapi');

const pointer = (...parts: string[]) =>
  parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

/** Document paths as regular expressions; literal paths first, so `by-id` beats `{externalId}`. */
const routes = Object.keys(document.paths)
  .map((template) => ({
    template,
    literal: template.split('/').filter((s) => !s.startsWith('{')).length,
    pattern: new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }))
  .sort((a, b) => b.literal - a.literal);

// What the rendered reference page loads is not part of the API.
const notApi = (path: string) => path === '/docs' || path.startsWith('/docs/');

const violations: string[] = [];

async function check(method: string, url: URL, res: Answered): Promise<void> {
  const where = `${method} ${url.pathname} → ${res.status}`;
  const route = routes.find((r) => r.pattern.test(url.pathname));
  const operations = route ? document.paths[route.template]! : undefined;
  const operation = operations?.[method.toLowerCase()];
  if (res.status === 405 && !res.headers.get('allow'))
    violations.push(`${where}: 405 without Allow`);
  let schemaRef: string | undefined;
  if (!operation) {
    // An unknown path or method: the ingress or a service refuses it with the standard error.
    if (![400, 404, 405, 413, 414].includes(res.status)) {
      violations.push(`${where}: not a documented operation, yet not refused`);
    }
    schemaRef = 'openapi#/components/schemas/Error';
  } else {
    const answer = operation.responses[String(res.status)];
    if (!answer) {
      violations.push(`${where}: status not documented for ${method} ${route!.template}`);
      return;
    }
    const type = res.headers.get('content-type')?.split(';')[0]?.trim();
    if (answer.content && type && answer.content[type]) {
      schemaRef = `openapi#${pointer('', 'paths', route!.template, method.toLowerCase(), 'responses', String(res.status), 'content', type, 'schema')}`;
    } else if (answer.content && res.status !== 304 && type) {
      violations.push(`${where}: content type ${type} not documented`);
    }
  }
  const type = res.headers.get('content-type')?.split(';')[0]?.trim() ?? '';
  const json = type === 'application/json' || type.endsWith('+json');
  if (!schemaRef || !json || res.status === 304) return;
  const text = await res.text();
  if (text === '') return;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    violations.push(`${where}: body is not JSON though typed ${type}`);
    return;
  }
  const validate = ajv.getSchema(schemaRef) ?? ajv.compile({ $ref: schemaRef });
  if (!validate(body)) {
    violations.push(
      `${where}: body does not match the document: ${ajv.errorsText(validate.errors)}`,
    );
  }
}

const realFetch = globalThis.fetch;
globalThis.fetch = async (...args: Parameters<typeof fetch>): Promise<Response> => {
  const [input, init] = args;
  const res = await realFetch(input, init);
  const url = new URL(input instanceof Request ? input.url : String(input));
  const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
  if (url.origin === new URL(INGRESS).origin && !notApi(url.pathname) && method !== 'OPTIONS') {
    await check(method, url, res.clone());
  }
  return res;
};

afterEach(() => {
  if (violations.length === 0) return;
  const found = violations.splice(0);
  throw new Error(`answers outside the OpenAPI document:\n  ${found.join('\n  ')}`);
});
