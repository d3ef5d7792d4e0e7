import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import {
  createHttpApp,
  jsonBody,
  mountRoutes,
  startServer,
  type RunningServer,
} from '../../src/index.js';
import { z } from 'zod';
import {
  illFormedText,
  isWellFormed,
  mayEscapeSurrogate,
  KEY_NOT_WELL_FORMED,
  NOT_WELL_FORMED,
} from '../../src/unicode.js';

describe('isWellFormed', () => {
  it.each([
    ['ASCII', true, 'plain'],
    ['a surrogate pair (an emoji)', true, 'a\ud83d\ude00b'],
    ['U+FFFD itself', true, 'a\ufffdb'],
    ['a high surrogate alone', false, 'a\ud800b'],
    ['a low surrogate alone', false, 'a\udc00b'],
    ['a pair in the wrong order', false, '\ude00\ud83d'],
    ['a high surrogate at the end', false, 'ab\udbff'],
  ])('when the string holds %s, then it is well-formed: %s', (_what, expected, value) => {
    expect(isWellFormed(value)).toBe(expected);
  });
});

describe('illFormedText', () => {
  it('when no string or key is ill-formed, then undefined, pairs and U+FFFD included', () => {
    expect(illFormedText({ a: ['\ud83d\ude00', { 'k\ud83d\ude00': '\ufffd' }], n: 1 })).toBe(
      undefined,
    );
    expect(illFormedText(null)).toBe(undefined);
    expect(illFormedText(42)).toBe(undefined);
  });

  it('when the value itself is an ill-formed string, then the empty path', () => {
    expect(illFormedText('\ud800')).toEqual({ path: [], key: false });
  });

  it('when a value deep inside is ill-formed, then its path of keys and indexes', () => {
    expect(illFormedText({ a: 'ok', b: [0, { c: ['x', 'y\udfff'] }] })).toEqual({
      path: ['b', 1, 'c', 1],
      key: false,
    });
  });

  it('when a key is ill-formed, then the path of the object that has it', () => {
    expect(illFormedText([{ p: { ok: 1, 'k\ud800': 2 } }])).toEqual({
      path: [0, 'p'],
      key: true,
    });
  });

  it('when several are ill-formed, then the first in document order', () => {
    expect(illFormedText([{ a: { b: 'x' }, c: '\ud800' }, '\udc00'])).toEqual({
      path: [0, 'c'],
      key: false,
    });
  });

  it('when it sits under a __proto__ key JSON.parse made, then it is found too', () => {
    expect(illFormedText(JSON.parse('{"__proto__":{"x":"\\ud800"}}'))).toEqual({
      path: ['__proto__', 'x'],
      key: false,
    });
  });

  it('when the value nests 500,000 levels deep, then it is walked without a stack overflow', () => {
    const depth = 500_000;
    const value: unknown = JSON.parse(`${'['.repeat(depth)}"\\ud800"${']'.repeat(depth)}`);

    expect(illFormedText(value)?.path).toHaveLength(depth);
  });
});

describe('mayEscapeSurrogate', () => {
  it.each([
    ['no escape at all', false, '{"a":"é😀"}'],
    ['escapes of other characters', false, '{"a":"\\u00e9\\u0041\\ud7ff\\ue000"}'],
    ['a high surrogate escape', true, '{"a":"\\ud800"}'],
    ['a low surrogate escape in upper case', true, '{"a":"\\uDFFF"}'],
    ['an escaped pair', true, '{"a":"\\uD83D\\uDE00"}'],
    [
      'an escaped backslash before ud800 (read as one: the walk decides)',
      true,
      '{"a":"\\\\ud800"}',
    ],
    ['a cut escape at the end', false, '"\\ud'],
  ])('when the text holds %s, then it may escape a surrogate: %s', (_what, expected, text) => {
    expect(mayEscapeSurrogate(Buffer.from(text))).toBe(expected);
  });
});

describe('jsonBody', () => {
  let running: RunningServer;
  beforeAll(async () => {
    const logger = pino({ level: 'silent' });
    const app = createHttpApp({
      logger,
      routes: (app) => {
        app.post('/echo', ...jsonBody(), (req, res) => {
          res.json({ got: req.body as unknown });
        });
        app.post('/named', ...jsonBody((path) => `things${JSON.stringify(path)}`), (req, res) => {
          res.json({ got: req.body as unknown });
        });
        // A route mounted from a manifest names fields its own way.
        mountRoutes(
          app,
          {
            routes: {
              write: {
                method: 'post',
                path: '/mounted',
                audience: 'public',
                access: { kind: 'none' },
                summary: 'write',
                requestBody: z.object({}),
                bodyFieldName: (path) => `item.${String(path.join('/'))}`,
              },
            },
          },
          { write: (_req, res) => res.json({}) },
          {},
        );
      },
    });
    running = await startServer(app, { host: '127.0.0.1', port: 0, logger });
  });
  afterAll(() => running.close());

  const post = (path: string, body: string | Uint8Array, contentType = 'application/json') =>
    fetch(`${running.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': contentType },
      body,
    });

  async function expect400(res: Response, message: string) {
    expect({ status: res.status, body: await res.json() }).toStrictEqual({
      status: 400,
      body: { code: 'validation_error', message },
    });
  }

  it.each([
    ['a high surrogate', '{"email":"lone\\ud800@x.com"}', 'body.email'],
    ['a low surrogate', '{"email":"lone\\udc00@x.com"}', 'body.email'],
    ['a pair in the wrong order', '{"email":"\\ude00\\ud83d@x.com"}', 'body.email'],
    [
      'a surrogate in a field the route ignores',
      '{"email":"a@x.com","x":["\\uDBFF"]}',
      'body.x[0]',
    ],
    ['a surrogate in an array body', '[{"a":1},{"a":"\\ud800"}]', 'body[1].a'],
    ['a surrogate as the whole body', '"\\ud800"', 'body'],
  ])('when a string holds %s, then 400 naming it', async (_what, body, field) => {
    await expect400(await post('/echo', body), `${field}: ${NOT_WELL_FORMED}`);
  });

  it('when a key holds a surrogate alone, then 400 naming the object that has it', async () => {
    await expect400(
      await post('/echo', '{"properties":{"ok":1,"k\\ud800":2}}'),
      `body.properties: ${KEY_NOT_WELL_FORMED}`,
    );
  });

  it('when the route names fields its own way, then the 400 uses its names', async () => {
    await expect400(await post('/named', '[{"a":"\\ud800"}]'), `things[0,"a"]: ${NOT_WELL_FORMED}`);
    await expect400(
      await post('/mounted', '{"a":{"b":"\\ud800"}}'),
      `item.a/b: ${NOT_WELL_FORMED}`,
    );
  });

  it('when the surrogate lies deeper than any schema reads, then 400 naming a place on its way', async () => {
    const depth = 200_000;
    const res = await post('/echo', `${'['.repeat(depth)}"\\ud800"${']'.repeat(depth)}`);

    expect(res.status).toBe(400);
    const { message } = await res.json<{ message: string }>();
    expect(message).toBe(
      `body${'[0]'.repeat(128)}: holds a string or key that is not well-formed Unicode: an unpaired surrogate`,
    );
  });

  it('when strings hold surrogate pairs, escaped or not, or an escaped backslash, then they pass as sent', async () => {
    const res = await post(
      '/echo',
      '{"a":"\\ud83d\\ude00","😀":"😀","b":"\\\\ud800","c":"\\ufffd"}',
    );

    expect(res.status).toBe(200);
    expect(await res.json()).toStrictEqual({
      got: { a: '\ud83d\ude00', '😀': '😀', b: '\\ud800', c: '\ufffd' },
    });
  });

  it.each([
    ['a UTF-8-encoded surrogate (CESU-8)', 'eda080'],
    ['a lone continuation byte', '80'],
    ['a byte UTF-8 never uses', 'ff'],
    ['a cut sequence', 'e282'],
    ['an overlong encoding', 'c0af'],
  ])('when the body bytes hold %s, then 400, not U+FFFD', async (_what, hex) => {
    const body = Buffer.concat([
      Buffer.from('{"email":"raw'),
      Buffer.from(hex, 'hex'),
      Buffer.from('@x.com"}'),
    ]);

    await expect400(await post('/echo', body), 'request body is not valid UTF-8');
  });

  it.each(['utf-16', 'utf-16le', 'utf-32'])(
    'when the body declares charset=%s, then 400: JSON is UTF-8',
    async (charset) => {
      await expect400(
        await post('/echo', '{}', `application/json; charset=${charset}`),
        'unsupported request body encoding: JSON must be UTF-8',
      );
    },
  );

  it('when the body declares charset=utf-8 in any case, then it is read', async () => {
    const res = await post('/echo', '{"a":"é"}', 'application/json; charset=UTF-8');

    expect(res.status).toBe(200);
    expect(await res.json()).toStrictEqual({ got: { a: 'é' } });
  });
});
