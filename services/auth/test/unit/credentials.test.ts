import { describe, expect, it } from '@jest/globals';
import {
  isClientId,
  newClientId,
  newSecret,
  parseBasicCredentials,
  randomBase62,
} from '../../src/domain/credentials.js';

describe('credentials', () => {
  it('when a secret is made, then it carries sk_ and at least 256 bits of base62', () => {
    const secret = newSecret();
    // 43 base62 characters carry 43 * log2(62) = 256.03 bits.
    expect(secret).toMatch(/^sk_[0-9A-Za-z]{43}$/);
  });

  it('when ClientIDs are made, then secret and publishable ones differ by prefix and never repeat', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newClientId('secret')));
    expect(ids.size).toBe(1000);
    expect(newClientId('publishable')).toMatch(/^pk_/);
  });

  it('when a string is checked, then only the exact shape of a made ClientID passes', () => {
    expect(isClientId(newClientId('secret'))).toBe(true);
    expect(isClientId(newClientId('publishable'))).toBe(true);
    const valid = newClientId('secret');
    for (const other of [
      `${valid}0`,
      valid.slice(0, -1),
      `sk_${valid.slice(3)}`,
      `${valid.slice(0, 10)}\u0000${valid.slice(11)}`,
      `${valid.slice(0, 10)}\n${valid.slice(11)}`,
      `${valid}\n`,
      '',
    ]) {
      expect(isClientId(other)).toBe(false);
    }
  });

  it('when base62 is drawn, then every character of the alphabet shows up', () => {
    expect(new Set(randomBase62(4096)).size).toBe(62);
  });

  it.each([
    ['Basic Y2tfYTpza19i', { clientId: 'ck_a', secret: 'sk_b' }],
    ['basic cGtfeDo=', { clientId: 'pk_x', secret: '' }],
    [
      `Basic ${Buffer.from('ck_a:with:colons').toString('base64')}`,
      { clientId: 'ck_a', secret: 'with:colons' },
    ],
    ['Basic Onh4', null],
    ['Bearer abc', null],
    ['Basic', null],
    [undefined, null],
  ])('parses %p', (header, expected) => {
    expect(parseBasicCredentials(header)).toEqual(expected);
  });
});
