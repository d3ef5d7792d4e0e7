// The contract check: answers received from the running stack, checked against Herald's OpenAPI
// document. An undocumented status, a documented header that is missing (when required) or does
// not match its schema, a 405 without a truthful Allow, a media type the answer is not
// documented with, a body on an answer documented without one, or a JSON body its schema
// refuses is a violation. The suites that call the stack (tests/e2e, the SDK's integration
// tests) wrap fetch with it and fail a test that received one.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ValidateFunction } from 'ajv/dist/2020.js';

/** What the check reads of an answer; `body` as received, '' for none. */
export interface ReceivedAnswer {
  status: number;
  headers: { get(name: string): string | null };
  body: string;
}

interface HeaderSpec {
  $ref?: string;
  required?: boolean;
  schema?: { type?: string };
}
interface AnswerSpec {
  $ref?: string;
  content?: Record<string, { schema?: unknown }>;
  headers?: Record<string, HeaderSpec>;
}
type Document = {
  paths: Record<string, Record<string, { responses?: Record<string, AnswerSpec> }>>;
};

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);
/** How the ingress and the services refuse a request that names no operation. */
const REFUSALS = [400, 404, 405, 413, 414];

interface Contract {
  document: Document;
  routes: { template: string; pattern: RegExp }[];
  /** The schema at `pointer` (in the document) refuses `value`: why; else null. */
  refusal: (pointer: string, value: unknown) => string | null;
  /** The object at `pointer`, following `$ref` once; with the pointer it was found at. */
  resolve: <T extends { $ref?: string }>(pointer: string, value: T) => [T, string];
}

let loaded: Promise<Contract> | undefined;

/** Loaded on first use: suites that never check an answer pay nothing for Ajv. */
function contract(): Promise<Contract> {
  loaded ??= (async () => {
    const file = createRequire(import.meta.url).resolve('@herald/api-reference/openapi.json');
    const document = JSON.parse(readFileSync(file, 'utf8')) as Document;
    const { Ajv2020 } = await import('ajv/dist/2020.js');
    // A CommonJS module: its `default` is module.exports, which has the plugin as `default`.
    const { default: formats } = await import('ajv-formats');
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    formats.default(ajv);
    ajv.addSchema(document, 'openapi');
    const validators = new Map<string, ValidateFunction>();
    const root = document as unknown as Record<string, unknown>;
    return {
      document,
      // Literal paths first, so `by-id` beats `{externalId}`.
      routes: Object.keys(document.paths)
        .map((template) => ({
          template,
          literal: template.split('/').filter((s) => !s.startsWith('{')).length,
          pattern: new RegExp(
            `^${template.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`,
          ),
        }))
        .sort((a, b) => b.literal - a.literal),
      refusal: (pointer, value) => {
        let validate = validators.get(pointer);
        if (!validate) {
          validate = ajv.compile({ $ref: `openapi#${pointer}` });
          validators.set(pointer, validate);
        }
        return validate(value) ? null : ajv.errorsText(validate.errors);
      },
      resolve: (pointer, value) => {
        if (!value.$ref?.startsWith('#/')) return [value, pointer];
        const target = value.$ref.slice(1);
        const found = target
          .split('/')
          .slice(1)
          .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'))
          .reduce<unknown>((node, key) => (node as Record<string, unknown>)?.[key], root);
        return [found as typeof value, target];
      },
    };
  })();
  return loaded;
}

/** A JSON pointer: `base` (a pointer) followed by `parts`, each escaped. */
const pointer = (base: string, ...parts: string[]) =>
  base + parts.map((p) => `/${p.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

/** The media type of a Content-Type, without its parameters; null for none. */
const mediaType = (value: string | null) => value?.split(';')[0]?.trim().toLowerCase() || null;
const isJson = (type: string | null) =>
  type !== null && (type === 'application/json' || type.endsWith('+json'));
/** Allow's methods, comparable: upper case, sorted. */
const methodList = (value: string) =>
  value
    .split(',')
    .map((m) => m.trim().toUpperCase())
    .filter(Boolean)
    .sort()
    .join(', ');

/** A header's text as its schema's type reads it (what a client parses it as). */
function headerValue(schema: HeaderSpec['schema'], raw: string): unknown {
  const text = raw.trim();
  switch (schema?.type) {
    case 'integer':
    case 'number':
      return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : raw;
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : raw;
    case 'array':
      return text.split(',').map((item) => item.trim());
    default:
      return raw;
  }
}

// What the rendered reference page and the operator console load is not part of the API.
const notApi = (path: string) =>
  ['/docs', '/console'].some((page) => path === page || path.startsWith(`${page}/`));

/** What is wrong with one answer to `method url`, by the document; empty when nothing is. */
export async function contractViolations(
  method: string,
  url: string | URL,
  answer: ReceivedAnswer,
): Promise<string[]> {
  const { pathname } = new URL(url);
  const verb = method.toUpperCase();
  const where = `${verb} ${pathname} → ${answer.status}`;
  const found: string[] = [];
  const allow = answer.headers.get('allow');
  // RFC 9110: every 405 names what the path takes, in the API or not.
  if (answer.status === 405 && !allow) found.push(`${where}: 405 without Allow`);
  if (notApi(pathname)) return found;

  const { document, routes, refusal, resolve } = await contract();
  const route = routes.find((r) => r.pattern.test(pathname));
  const operations = route ? document.paths[route.template]! : undefined;
  const operation = operations?.[verb.toLowerCase()];
  const type = mediaType(answer.headers.get('content-type'));

  if (answer.status === 405 && allow && route) {
    const taken = methodList(
      Object.keys(operations!)
        .filter((m) => METHODS.has(m))
        .join(','),
    );
    if (methodList(allow) !== taken) {
      found.push(`${where}: Allow is "${allow}", but ${route.template} takes ${taken}`);
    }
  }

  let spec: AnswerSpec;
  let at: string;
  if (!operation) {
    // An unknown path or method: the ingress or a service refuses it with the standard error.
    if (!REFUSALS.includes(answer.status)) {
      found.push(`${where}: not a documented operation, yet not refused`);
    }
    spec = { content: { 'application/json': {} } };
    at = pointer('', 'components', 'schemas', 'Error');
  } else {
    const documented = operation.responses?.[String(answer.status)];
    if (!documented) {
      found.push(`${where}: status not documented for ${verb} ${route!.template}`);
      return found;
    }
    [spec, at] = resolve(
      pointer('', 'paths', route!.template, verb.toLowerCase(), 'responses', String(answer.status)),
      documented,
    );
    for (const [name, declared] of Object.entries(spec.headers ?? {})) {
      // OpenAPI ignores a Content-Type header declaration; the media types say it.
      if (name.toLowerCase() === 'content-type') continue;
      const [header, headerAt] = resolve(pointer(at, 'headers', name), declared);
      const raw = answer.headers.get(name);
      if (raw === null) {
        if (header.required) found.push(`${where}: the required header ${name} is missing`);
        continue;
      }
      if (!header.schema) continue;
      const why = refusal(`${headerAt}/schema`, headerValue(header.schema, raw));
      if (why) found.push(`${where}: header ${name}: "${raw}" does not match the document: ${why}`);
    }
  }

  if (!spec.content) {
    if (answer.body !== '') {
      found.push(
        `${where}: a body (${type ?? 'no Content-Type'}, ${answer.body.length} characters) on an answer documented without content`,
      );
    }
    return found;
  }
  const types = Object.keys(spec.content);
  if (answer.body === '') {
    if (verb !== 'HEAD') found.push(`${where}: no body, though documented as ${types.join(', ')}`);
    return found;
  }
  if (!type) {
    found.push(`${where}: a body without Content-Type, documented as ${types.join(', ')}`);
    return found;
  }
  if (!spec.content[type]) {
    found.push(`${where}: content type ${type} not documented (documented: ${types.join(', ')})`);
    return found;
  }
  if (!isJson(type)) return found;
  let body: unknown;
  try {
    body = JSON.parse(answer.body);
  } catch {
    found.push(`${where}: body is not JSON though typed ${type}`);
    return found;
  }
  const schemaAt = operation ? pointer(at, 'content', type, 'schema') : at;
  const why = refusal(schemaAt, body);
  if (why) found.push(`${where}: body does not match the document: ${why}`);
  return found;
}

/** The origins whose answers are checked, and what the checks found not yet taken. */
const origins = new Set<string>();
const pending: string[] = [];

const checked = (method: string, url: string | URL) =>
  origins.has(new URL(url).origin) && method.toUpperCase() !== 'OPTIONS';

/**
 * Checks answers from `origin` (the ingress, or a proxy in front of it) until the returned
 * function is called.
 */
export function checkAnswersFrom(origin: string | URL): () => void {
  const { origin: key } = new URL(origin);
  origins.add(key);
  return () => origins.delete(key);
}

/**
 * Checks one answer, read whole, when it comes from a checked origin (a CORS preflight is not an
 * operation of the document); what it finds waits for `takeContractViolations`.
 */
export async function checkAnswer(
  method: string,
  url: string | URL,
  answer: ReceivedAnswer,
): Promise<void> {
  if (!checked(method, url)) return;
  pending.push(...(await contractViolations(method, url, answer)));
}

/**
 * `fetchImpl`, with every answer from a checked origin checked (a copy of it is read whole before
 * the caller gets it). An answer whose body breaks off was never received, and is not checked.
 */
export function contractCheckedFetch(fetchImpl: typeof fetch): typeof fetch {
  return async (input, init) => {
    const res = await fetchImpl(input, init);
    const url = input instanceof Request ? input.url : String(input);
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    if (!checked(method, url)) return res;
    let body: string;
    try {
      body = await res.clone().text();
    } catch {
      return res;
    }
    pending.push(
      ...(await contractViolations(method, url, {
        status: res.status,
        headers: res.headers,
        body,
      })),
    );
    return res;
  };
}

/** What the checks found since the last call, as one error to fail the test with, or null. */
export function takeContractViolations(): Error | null {
  if (pending.length === 0) return null;
  const found = pending.splice(0);
  return new Error(`answers outside the OpenAPI document:\n  ${found.join('\n  ')}`);
}
