// The contract check on answers made up here, against the real OpenAPI document: what it lets
// pass and what it names.
import { describe, expect, it } from '@jest/globals';
import { contractViolations } from '../../src/index.js';

const BASE = 'http://127.0.0.1:8080';
const error = JSON.stringify({ code: 'x', message: 'm' });

function answer(status: number, headers: Record<string, string> = {}, body = '') {
  const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return {
    status,
    headers: { get: (name: string) => lower.get(name.toLowerCase()) ?? null },
    body,
  };
}
const json = { 'content-type': 'application/json; charset=utf-8' };
const check = (method: string, path: string, res: ReturnType<typeof answer>) =>
  contractViolations(method, `${BASE}${path}`, res);

describe('the contract check', () => {
  it('when an answer is as documented, then it names nothing', async () => {
    const limits = {
      'ratelimit-limit': '1000',
      'ratelimit-remaining': '999',
      'ratelimit-reset': '0',
    };
    expect(
      await check(
        'POST',
        '/v1/events/by-email',
        answer(202, { ...json, ...limits }, '{"accepted":1}'),
      ),
    ).toStrictEqual([]);
    expect(
      await check('GET', '/v1/contacts/x', answer(429, { ...json, 'retry-after': '3' }, error)),
    ).toStrictEqual([]);
    expect(await check('POST', '/v1/contacts/x/erase', answer(204))).toStrictEqual([]);
    expect(await check('GET', '/v1/openapi.json', answer(304))).toStrictEqual([]);
    expect(
      await check('TRACE', '/v1/contacts/x', answer(405, { ...json, allow: 'PUT, GET' }, error)),
    ).toStrictEqual([]);
    expect(await check('TRACE', '/v1/nothing', answer(404, json, error))).toStrictEqual([]);
  });

  it('when a documented header does not match its schema, then it is named with its value', async () => {
    const found = await check(
      'GET',
      '/v1/contacts/x',
      answer(429, { ...json, 'retry-after': 'soon', 'ratelimit-limit': '1.5' }, error),
    );
    expect(found).toStrictEqual([
      expect.stringMatching(/^GET \/v1\/contacts\/x → 429: header RateLimit-Limit: "1.5"/),
      expect.stringMatching(/^GET \/v1\/contacts\/x → 429: header Retry-After: "soon"/),
    ]);
  });

  it('when a 405 has no Allow, or an Allow the path does not take, then it is named', async () => {
    expect(await check('TRACE', '/docs', answer(405, json, error))).toStrictEqual([
      'TRACE /docs → 405: 405 without Allow',
    ]);
    expect(
      await check('DELETE', '/v1/contacts/x', answer(405, { ...json, allow: 'GET' }, error)),
    ).toStrictEqual([
      'DELETE /v1/contacts/x → 405: Allow is "GET", but /v1/contacts/{externalId} takes GET, PUT',
    ]);
  });

  it('when the body or its media type is not the documented one, then it is named', async () => {
    // Every 401 carries its challenge (a required header), so only the body is wrong here.
    const challenge = { 'www-authenticate': 'Basic realm="herald", charset="UTF-8"' };
    expect(await check('POST', '/v1/contacts/x/erase', answer(204, json, '{}'))).toStrictEqual([
      'POST /v1/contacts/x/erase → 204: a body (application/json, 2 characters) on an answer documented without content',
    ]);
    expect(
      await check(
        'POST',
        '/v1/token',
        answer(401, { ...challenge, 'content-type': 'text/html' }, '<p>no</p>'),
      ),
    ).toStrictEqual([
      'POST /v1/token → 401: content type text/html not documented (documented: application/json)',
    ]);
    expect(await check('POST', '/v1/token', answer(401, challenge, error))).toStrictEqual([
      'POST /v1/token → 401: a body without Content-Type, documented as application/json',
    ]);
    expect(await check('POST', '/v1/token', answer(401, { ...challenge, ...json }))).toStrictEqual([
      'POST /v1/token → 401: no body, though documented as application/json',
    ]);
    expect(
      await check('POST', '/v1/token', answer(401, { ...challenge, ...json }, '{"code":1}')),
    ).toStrictEqual([
      expect.stringMatching(/^POST \/v1\/token → 401: body does not match the document/),
    ]);
  });

  it('when a status is not documented, or an unknown operation is not refused, then it is named', async () => {
    expect(await check('POST', '/v1/token', answer(418, json, error))).toStrictEqual([
      'POST /v1/token → 418: status not documented for POST /v1/token',
    ]);
    expect(await check('PATCH', '/v1/token', answer(200, json, error))).toStrictEqual([
      'PATCH /v1/token → 200: not a documented operation, yet not refused',
    ]);
  });
});
