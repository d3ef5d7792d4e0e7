// The OpenAPI document as generated (npm run generate): linted with Redocly's strict
// recommended rules, and complete enough for generated clients and the rendered reference.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { createConfig, lint } from '@redocly/openapi-core';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { openApiDocument } from '../src/index.js';

const documentFile = fileURLToPath(new URL('../openapi.json', import.meta.url));

interface Media {
  schema: unknown;
  example?: unknown;
}

interface Operation {
  operationId?: string;
  requestBody?: { content: Record<string, Media> };
  summary?: string;
  description?: string;
  security?: unknown[];
  parameters?: { name: string; in: string; schema: { format?: string; pattern?: string } }[];
  responses: Record<
    string,
    {
      headers?: Record<string, unknown>;
      content?: Record<string, Media & { schema: { $ref?: string } }>;
    }
  >;
}

const operations = () =>
  Object.entries(openApiDocument().paths as Record<string, Record<string, Operation>>).flatMap(
    ([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({
        name: `${method.toUpperCase()} ${path}`,
        op,
      })),
  );

describe('the OpenAPI document', () => {
  it('passes the strict recommended lint rules', async () => {
    const config = await createConfig({
      extends: ['recommended-strict'],
      rules: {
        // The rule refuses any localhost server, and the first server is the local stack
        // (http://localhost:8080) on purpose: the reference page's "Try it out" sends requests
        // there unless the reader picks another. Only dropping that server would satisfy it.
        'no-server-example.com': 'off',
        // `/v1/contacts/by-id/{id}` and `/v1/contacts/{externalId}/erase` both match
        // `/v1/contacts/by-id/erase`, and the path templates are the public API: only renaming
        // public paths would satisfy the rule. The literal segment wins, as the reference states.
        'no-ambiguous-paths': 'off',
        // The licence is proprietary: there is no licence text at a URL and no SPDX identifier
        // for it, one of which this rule wants beside the name.
        'info-license-strict': 'off',
      },
    });
    const problems = await lint({ ref: documentFile, config });
    expect(
      problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`),
    ).toEqual([]);
  });

  it('gives every operation an id, a summary and a description', () => {
    for (const { name, op } of operations()) {
      expect({ name, operationId: typeof op.operationId }).toEqual({ name, operationId: 'string' });
      expect({ name, summary: Boolean(op.summary) }).toEqual({ name, summary: true });
      expect({ name, description: Boolean(op.description) }).toEqual({ name, description: true });
    }
  });

  it('names the error bodies as components and documents the answers of the ingress', () => {
    for (const { name, op } of operations()) {
      for (const status of ['404', '405', '500', '502', '503', '504']) {
        expect({ name, status, documented: status in op.responses }).toEqual({
          name,
          status,
          documented: true,
        });
      }
      for (const [status, answer] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        const schema = Object.values(answer.content ?? {})[0]?.schema;
        expect({ name, status, ref: schema?.$ref?.startsWith('#/components/schemas/') }).toEqual({
          name,
          status,
          ref: true,
        });
      }
    }
  });

  it('shows real requests and answers as examples, each valid by its schema', () => {
    /** What this test uses of Ajv (its typings do not resolve under the linter's parser). */
    interface Validator {
      addSchema(schema: object, key: string): unknown;
      compile(schema: object): ((data: unknown) => boolean) & { errors?: unknown };
      errorsText(errors: unknown): string;
    }
    const ajv = new Ajv2020({ strict: false, allErrors: true }) as unknown as Validator;
    (addFormatsModule as unknown as (ajv: Validator) => void)(ajv);
    ajv.addSchema(openApiDocument(), 'openapi');
    const pointer = (...parts: string[]) =>
      parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
    const paths = openApiDocument().paths as Record<string, Record<string, Operation>>;
    const checked: string[] = [];
    for (const [path, methods] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const media = [
          ...Object.entries(op.requestBody?.content ?? {}).map(
            ([type, m]) => [m, ['requestBody', 'content', type]] as const,
          ),
          ...Object.entries(op.responses).flatMap(([status, answer]) =>
            Object.entries(answer.content ?? {}).map(
              ([type, m]) => [m, ['responses', status, 'content', type]] as const,
            ),
          ),
        ];
        for (const [m, at] of media) {
          if (m.example === undefined) continue;
          const where = `${method.toUpperCase()} ${path} ${at.join(' ')}`;
          const validate = ajv.compile({
            $ref: `openapi#${pointer('', 'paths', path, method, ...at, 'schema')}`,
          });
          expect({
            where,
            valid: validate(m.example),
            errors: ajv.errorsText(validate.errors),
          }).toEqual({
            where,
            valid: true,
            errors: 'No errors',
          });
          checked.push(where);
        }
      }
    }
    // Every answer with a body shows one but the document's own: it would hold itself.
    const withoutExample = Object.entries(paths).flatMap(([path, methods]) =>
      Object.entries(methods).flatMap(([method, op]) =>
        Object.entries(op.responses).flatMap(([status, answer]) =>
          Object.entries(answer.content ?? {})
            .filter(([, m]) => m.example === undefined)
            .map(([type]) => `${method.toUpperCase()} ${path} ${status} ${type}`),
        ),
      ),
    );
    expect(withoutExample).toEqual(['GET /v1/openapi.json 200 application/json']);
    expect(checked.length).toBeGreaterThanOrEqual(200);
  });

  it('documents Retry-After on every 429 and 503', () => {
    for (const { name, op } of operations()) {
      for (const status of ['429', '503']) {
        if (!(status in op.responses)) continue;
        expect({
          name,
          status,
          retryAfter: op.responses[status]!.headers?.['Retry-After'],
        }).toEqual({
          name,
          status,
          retryAfter: { $ref: '#/components/headers/Retry-After' },
        });
      }
    }
  });

  it('documents WWW-Authenticate, required, on every 401', () => {
    let checked = 0;
    for (const { name, op } of operations()) {
      if (!('401' in op.responses)) continue;
      checked += 1;
      expect({ name, header: op.responses['401'].headers?.['WWW-Authenticate'] }).toEqual({
        name,
        header: { $ref: '#/components/headers/WWW-Authenticate' },
      });
    }
    expect(checked).toBeGreaterThanOrEqual(20);
    const { components } = openApiDocument() as {
      components: { headers: Record<string, unknown> };
    };
    expect(components.headers['WWW-Authenticate']).toMatchObject({ required: true });
  });

  it("states the format of the operator routes' Tenant ids and ClientIDs", () => {
    const formats = new Map<string, unknown>();
    for (const { name, op } of operations()) {
      for (const p of op.parameters ?? []) {
        if (p.name !== 'tenantId' && p.name !== 'clientId') continue;
        formats.set(`${name} ${p.name}`, p.schema.format ?? p.schema.pattern);
      }
    }
    expect(formats.size).toBeGreaterThanOrEqual(7);
    for (const [where, format] of formats) {
      expect({ where, format }).toEqual({
        where,
        format: where.endsWith('clientId') ? '^(ck_|pk_)[0-9A-Za-z]{22}$' : 'uuid',
      });
    }
  });

  it('lists the servers and the three ways to authenticate', () => {
    const document = openApiDocument() as {
      servers: { url: string }[];
      components: { securitySchemes: Record<string, unknown> };
    };
    expect(document.servers.map((s) => s.url)).toEqual(['http://localhost:8080', 'https://{host}']);
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual([
      'accessToken',
      'adminToken',
      'clientCredentials',
    ]);
  });
});
