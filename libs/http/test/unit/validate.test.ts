import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { parseOrThrow } from '../../src/index.js';

const schema = z.object({
  name: z.string().min(1),
  scopes: z.array(z.enum(['a', 'b'])).optional(),
});

describe('parseOrThrow', () => {
  it('when the input fits, then the parsed value comes back', () => {
    expect(parseOrThrow(schema, { name: 'Acme', extra: 1 })).toEqual({ name: 'Acme' });
  });

  it('when a nested field is wrong, then 400 validation_error names its path', () => {
    expect(() => parseOrThrow(schema, { name: 'Acme', scopes: ['a', 'c'] })).toThrow(
      expect.objectContaining({
        status: 400,
        code: 'validation_error',
        message: expect.stringMatching(/^body\.scopes\[1\]: /),
      }),
    );
  });

  it('when the body is not an object, then the message names the body', () => {
    expect(() => parseOrThrow(schema, null)).toThrow(/^body: /);
  });
});
