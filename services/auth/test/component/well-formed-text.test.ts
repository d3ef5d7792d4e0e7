// Text UTF-8 cannot encode (an unpaired surrogate) would be stored as U+FFFD: refused instead.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN_TOKEN, startAuthService, type TestAuthService } from '../support.js';

let auth: TestAuthService;
beforeAll(async () => {
  auth = await startAuthService();
});
afterAll(() => auth.close());

describe('operator API: text that is not well-formed Unicode', () => {
  it.each([
    ['a high surrogate alone', 'Ac\ud800me'],
    ['a low surrogate alone', 'Ac\udc00me'],
  ])('when a tenant name holds %s, then 400 validation_error naming body.name', async (_, name) => {
    const res = await auth.admin('/tenants', { name });

    expect({ status: res.status, body: await res.json() }).toStrictEqual({
      status: 400,
      body: {
        code: 'validation_error',
        message: 'body.name: must be well-formed Unicode, without an unpaired surrogate',
      },
    });
  });

  it('when a tenant name holds an escaped surrogate pair, then it is stored as that character', async () => {
    const res = await fetch(`${auth.url}/admin/v1/tenants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: '{"name":"Acme \\ud83d\\ude80"}',
    });

    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ name: 'Acme 🚀' });
  });
});
