import { describe, expect, it } from '@jest/globals';
import { INGRESS } from './support.js';

describe('the ingress', () => {
  it.each([
    ['GET', '/v2/contacts/x'],
    ['POST', '/v1/nothing-here'],
    ['GET', '/'],
    ['DELETE', '/v1'],
  ])(
    'when %s %s names no route, then 404 not_found as JSON with a request id',
    async (method, route) => {
      const res = await fetch(`${INGRESS}${route}`, { method });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual({ code: 'not_found', message: expect.any(String) });
      expect(res.headers.get('x-request-id')).toBeTruthy();
    },
  );

  it('when a body is over 1 MiB, then 413 payload_too_large as JSON', async () => {
    const res = await fetch(`${INGRESS}/v1/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ filler: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ code: 'payload_too_large', message: expect.any(String) });
  });

  it('when the service internals are asked for, then the ingress does not expose them', async () => {
    for (const route of ['/healthz', '/readyz', '/.well-known/jwks.json']) {
      expect((await fetch(`${INGRESS}${route}`)).status).toBe(404);
    }
  });
});
