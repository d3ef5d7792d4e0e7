import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { buildOpenApi, errorSchemas } from '../../src/index.js';

const { standardError } = errorSchemas;

describe('buildOpenApi', () => {
  it('when operations are given, then paths carry their schemas, parameters and security', () => {
    const body = z.object({ email: z.email(), name: z.string().optional() });
    const doc = buildOpenApi({ title: 'T', version: '1' }, [
      {
        operationId: 'upsertThing',
        method: 'put',
        path: '/v1/things/{id}',
        summary: 'Upsert a thing',
        tag: 'Public API',
        auth: { kind: 'bearer', scope: 'things:write' },
        pathParameters: { id: { description: 'the id' } },
        requestBody: body,
        responses: {
          200: { description: 'updated', schema: body },
          400: { description: 'bad', schema: standardError },
        },
      },
    ]);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- walking a JSON document
    const op = (doc.paths as Record<string, Record<string, any>>)['/v1/things/{id}']!.put;
    expect(op.security).toEqual([{ accessToken: ['things:write'] }]);
    expect(op.parameters[0]).toMatchObject({ name: 'id', in: 'path', required: true });
    expect(op.requestBody.content['application/json'].schema).toMatchObject({
      type: 'object',
      required: ['email'],
      properties: { email: { type: 'string', format: 'email' } },
    });
    expect(op.operationId).toBe('upsertThing');
    // The error bodies are named components, referenced where they are answered.
    expect(op.responses['400'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Error',
    });
    expect(
      (doc.components as { schemas: Record<string, { required: string[] }> }).schemas.Error!
        .required,
    ).toEqual(['code', 'message']);
    // What the ingress or any service may answer, besides the operation's own.
    expect(Object.keys(op.responses).sort()).toEqual(
      ['200', '400', '402', '404', '405', '413', '429', '500', '502', '503', '504'].sort(),
    );
    expect(op.responses['405'].headers.Allow).toEqual({ $ref: '#/components/headers/Allow' });
  });

  it('when a DELETE operation has query parameters, then they follow the path parameters, required unless said otherwise', () => {
    const doc = buildOpenApi({ title: 'T', version: '1' }, [
      {
        operationId: 'deleteThing',
        method: 'delete',
        path: '/admin/v1/things/{id}',
        summary: 'Delete a thing',
        tag: 'Operator API',
        auth: { kind: 'admin' },
        pathParameters: { id: { description: 'the id' } },
        queryParameters: {
          confirm: { description: 'the id again', schema: z.string() },
          note: { description: 'why', required: false },
        },
        responses: { 202: { description: 'accepted' } },
      },
    ]);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- walking a JSON document
    const op = (doc.paths as Record<string, Record<string, any>>)['/admin/v1/things/{id}']!.delete;
    expect(op.parameters).toEqual([
      expect.objectContaining({ name: 'id', in: 'path', required: true }),
      expect.objectContaining({
        name: 'confirm',
        in: 'query',
        required: true,
        description: 'the id again',
        schema: expect.objectContaining({ type: 'string' }),
      }),
      expect.objectContaining({ name: 'note', in: 'query', required: false }),
    ]);
    expect(op.security).toEqual([{ adminToken: [] }]);
    expect(op.responses['413']).toBeDefined();
  });

  it("when an ingress controller answers 502 or 504 itself, then its own page is documented, not Herald's error body", () => {
    const doc = buildOpenApi({ title: 'T', version: '1' }, [
      {
        operationId: 'readThing',
        method: 'get',
        path: '/v1/things',
        summary: 'Read',
        tag: 'Public API',
        auth: { kind: 'none' },
        responses: { 200: { description: 'ok' } },
      },
    ]);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- walking a JSON document
    const { responses } = (doc.paths as Record<string, Record<string, any>>)['/v1/things']!.get;
    for (const status of ['502', '504']) {
      const page = responses[status].content['text/html'];
      expect(page.schema).toEqual({ $ref: '#/components/schemas/IngressErrorPage' });
      expect(page.example).toContain(`<title>${status} `);
    }
    expect(
      (doc.components as { schemas: Record<string, unknown> }).schemas.IngressErrorPage,
    ).toMatchObject({ type: 'string' });
  });

  it('when a route words a common answer its own way without an example, then it shows the shared one', () => {
    const doc = buildOpenApi({ title: 'T', version: '1' }, [
      {
        operationId: 'writeThing',
        method: 'post',
        path: '/v1/things',
        summary: 'Write',
        tag: 'Operator API',
        auth: { kind: 'admin' },
        responses: {
          201: { description: 'created' },
          404: {
            description: 'no such tenant',
            schema: standardError,
            example: { code: 'not_found', message: 'no such tenant' },
          },
          503: { description: 'the database is unreachable', schema: standardError },
        },
      },
    ]);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- walking a JSON document
    const { responses } = (doc.paths as Record<string, Record<string, any>>)['/v1/things']!.post;
    const example = (status: string) => responses[status].content['application/json'].example;
    expect(responses['503'].description).toBe('the database is unreachable');
    expect(example('503')).toEqual({
      code: 'service_unavailable',
      message: 'The service is unavailable; try again in a few seconds.',
    });
    expect(example('404')).toEqual({ code: 'not_found', message: 'no such tenant' });
    expect(example('413')).toMatchObject({ code: 'payload_too_large' });
  });

  it('when two operations share an operationId, then it refuses to build', () => {
    const op = {
      operationId: 'same',
      method: 'get' as const,
      summary: 's',
      tag: 'Public API' as const,
      auth: { kind: 'none' as const },
      responses: { 200: { description: 'ok' } },
    };
    expect(() =>
      buildOpenApi({ title: 'T', version: '1' }, [
        { ...op, path: '/a' },
        { ...op, path: '/b' },
      ]),
    ).toThrow('operationId same is used twice');
  });
});

describe('buildOpenApi and the shared policy', () => {
  const op = (
    method: 'get' | 'post',
    auth: { kind: 'bearer'; scope: string } | { kind: 'admin' },
    allowedWhileSuspended?: boolean,
  ) => ({
    operationId: `${method}-${auth.kind}-${String(allowedWhileSuspended)}`,
    method,
    path: `/v1/${method}-${auth.kind}-${String(allowedWhileSuspended)}`,
    summary: 's',
    tag: 'Public API' as const,
    auth,
    responses: { 200: { description: 'ok' } },
    ...(allowedWhileSuspended === undefined ? {} : { allowedWhileSuspended }),
  });

  it('when a route is budgeted, then 429, the RateLimit headers and (on writes that can be refused) 402 are documented', () => {
    const bearer = { kind: 'bearer' as const, scope: 'x' };
    const doc = buildOpenApi({ title: 'T', version: '1' }, [
      op('get', bearer),
      op('post', bearer),
      op('post', bearer, true),
      op('post', { kind: 'admin' }),
    ]);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- walking a JSON document
    const paths = doc.paths as Record<string, Record<string, any>>;
    const common = ['400', '404', '405', '500', '502', '503', '504'];
    const codes = (path: string, method: string) =>
      Object.keys(paths[path]![method].responses)
        .filter((c) => !common.includes(c) && c !== '413')
        .sort();

    expect(codes('/v1/get-bearer-undefined', 'get')).toEqual(['200', '429']);
    expect(codes('/v1/post-bearer-undefined', 'post')).toEqual(['200', '402', '429']);
    expect(codes('/v1/post-bearer-true', 'post')).toEqual(['200', '429']);
    expect(codes('/v1/post-admin-undefined', 'post')).toEqual(['200']);

    const write = paths['/v1/post-bearer-undefined']!.post.responses;
    expect(write['402'].content['application/problem+json']).toBeDefined();
    expect(Object.keys(write['200'].headers)).toEqual([
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
    ]);
    expect(write['429'].headers['Retry-After']).toEqual({
      $ref: '#/components/headers/Retry-After',
    });
    expect(paths['/v1/post-admin-undefined']!.post.responses['200'].headers).toBeUndefined();
  });

  it('when a route answers 429 or 503, budgeted or not, then Retry-After is documented on them', () => {
    const doc = buildOpenApi({ title: 'T', version: '1' }, [
      op('get', { kind: 'bearer', scope: 'x' }),
      {
        ...op('post', { kind: 'admin' }),
        responses: {
          200: { description: 'ok' },
          429: { description: 'too many', schema: standardError },
        },
      },
    ]);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- walking a JSON document
    const paths = doc.paths as Record<string, Record<string, any>>;
    const retryAfter = { $ref: '#/components/headers/Retry-After' };
    for (const [path, method] of [
      ['/v1/get-bearer-undefined', 'get'],
      ['/v1/post-admin-undefined', 'post'],
    ] as const) {
      const { responses } = paths[path]![method];
      expect(responses['429'].headers['Retry-After']).toEqual(retryAfter);
      expect(responses['503'].headers['Retry-After']).toEqual(retryAfter);
      expect(responses['500'].headers?.['Retry-After']).toBeUndefined();
    }
  });
});
