import { describe, expect, it } from '@jest/globals';
import { AppError } from '@herald/errors';
import { isUuid, uuidParam, uuidParameter } from '../../src/index.js';

describe('uuidParam', () => {
  it('when the parameter is a uuid in any case, then it comes back lower-cased', () => {
    expect(uuidParam('6F1F1B8E-4F3A-4C57-9D55-0D3F1F2B8A10', 'no such tenant')).toBe(
      '6f1f1b8e-4f3a-4c57-9d55-0d3f1f2b8a10',
    );
    // Version and variant bits are not checked: such an id is simply not found later.
    expect(uuidParam('00000000-0000-0000-0000-000000000000', 'no such tenant')).toBe(
      '00000000-0000-0000-0000-000000000000',
    );
  });

  it.each([
    undefined,
    '',
    'not-a-uuid',
    '6f1f1b8e-4f3a-4c57-9d55-0d3f1f2b8a1',
    ' 6f1f1b8e-4f3a-4c57-9d55-0d3f1f2b8a10',
  ])('when the parameter is %p, then a 404 with the given message', (raw) => {
    let thrown: unknown;
    try {
      uuidParam(raw, 'no such contact');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect(thrown).toMatchObject({ status: 404, code: 'not_found', message: 'no such contact' });
  });

  it('when asked whether a value is a uuid, then only the 8-4-4-4-12 hex shape is', () => {
    expect(isUuid('6f1f1b8e-4f3a-4c57-9d55-0d3f1f2b8a10')).toBe(true);
    expect(isUuid('6f1f1b8e4f3a4c579d550d3f1f2b8a10')).toBe(false);
  });

  it('when the OpenAPI document states a uuid parameter, then its schema takes exactly what uuidParam takes', () => {
    for (const value of [
      '6f1f1b8e-4f3a-4c57-9d55-0d3f1f2b8a10',
      '6F1F1B8E-4F3A-4C57-9D55-0D3F1F2B8A10',
      '00000000-0000-0000-0000-000000000001',
      '6f1f1b8e-4f3a-0c57-1d55-0d3f1f2b8a10',
      '',
      'not-a-uuid',
      '6f1f1b8e4f3a4c579d550d3f1f2b8a10',
      ' 6f1f1b8e-4f3a-4c57-9d55-0d3f1f2b8a10',
    ]) {
      expect({ value, documented: uuidParameter.safeParse(value).success }).toEqual({
        value,
        documented: isUuid(value),
      });
    }
  });
});
