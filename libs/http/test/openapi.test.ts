import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { buildOpenApi, errorSchemas } from '../src/index.js';

const { standardError } = errorSchemas;

describe('buildOpenApi', () => {
  it('when operations are given, then paths carry their schemas, parameters and security', () => {
    const body = z.object({ email: z.email(), name: z.string().optional() });
    const doc = buildOpenApi({ title: 'T', version: '1' }, [
      {
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
    expect(op.responses['400'].content['application/json'].schema.required).toEqual([
      'code',
      'message',
    ]);
  });
});
