import { afterEach, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import { loggerToLines } from '../log-lines.js';
import { createHttpApp, hasDotSegment, startServer, type RunningServer } from '../../src/index.js';

describe('hasDotSegment', () => {
  it.each([
    // plain
    '/.',
    '/..',
    '/./docs',
    '/../docs',
    '/v1/contacts/.',
    '/v1/contacts/..',
    '/v1/contacts/./x',
    '/v1/contacts/../events/by-email',
    '/internal/v1/revoked-keys/../../../docs',
    // percent-encoded dots, either case, and mixed with plain ones
    '/v1/contacts/%2e',
    '/v1/contacts/%2E',
    '/v1/contacts/%2e%2e',
    '/v1/contacts/%2E%2E/x',
    '/v1/contacts/%2e%2E',
    '/v1/contacts/.%2e',
    '/v1/contacts/%2e./x',
    '/v1/contacts/.%2E/x',
    // segments separated by an encoded slash, either case
    '/admin/v1/tenants%2F..%2F..%2F..%2Fdocs',
    '/admin/v1/tenants%2f..%2f..%2fdocs',
    '/v1/contacts/a%2F..',
    '/v1/contacts/a%2F.%2Fb',
    '/v1/contacts/a%2F%2e%2e%2Fb',
    '/v1/contacts/a%2f%2E%2e/b',
    '/v1/contacts/..%2Fb',
    // before a query or a fragment
    '/v1/contacts/..?x=1',
    '/v1/contacts/%2e%2e?x=1',
    '/v1/contacts/..#x',
    // an absolute-form request target
    'http://localhost/internal/v1/revoked-keys/../../../docs',
    // a bare one
    '..',
    '.',
  ])('when the raw path is %s, then it has a dot-segment', (target) => {
    expect(hasDotSegment(target)).toBe(true);
  });

  it.each([
    '/',
    '/docs',
    '/v1/contacts/john.doe',
    '/v1/contacts/a..b',
    '/v1/contacts/...',
    '/v1/contacts/....',
    '/v1/contacts/.hidden',
    '/v1/contacts/trailing.',
    '/v1/contacts/..x',
    '/v1/contacts/x..',
    '/v1/contacts/%2e%2e%2e',
    '/v1/contacts/.%2e.',
    '/v1/contacts/%2ex',
    '/v1/contacts/a.%2Fb',
    '/v1/contacts/a%2F.b',
    '/v1/contacts/ada%40example.com',
    '/v1/contacts/ada@example.com/export',
    // double-encoded: `%2e` and `%2F` only to the layer after the one that decodes them
    '/v1/contacts/%252e',
    '/v1/contacts/%252e%252e',
    '/v1/contacts/%252E%252E/x',
    '/v1/contacts/a%252F..b',
    '/v1/contacts/a%252F%252e%252e',
    // dot-segments after the path, in the query or a fragment
    '/v1/contacts/x?next=/../docs',
    '/v1/contacts/x?p=..',
    '/docs#/../../internal/v1/revoked-keys',
    '',
  ])('when the raw path is %s, then it has no dot-segment', (target) => {
    expect(hasDotSegment(target)).toBe(false);
  });
});

describe('a service built with createHttpApp', () => {
  const { logger, lines } = loggerToLines();
  let running: RunningServer | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
    lines.length = 0;
  });

  async function start() {
    const app = createHttpApp({
      logger,
      routes: (app) => {
        app.get('/docs', (_req, res) => {
          res.json({ page: 'docs' });
        });
        app.get('/v1/things/:id', (req, res) => {
          res.json({ id: req.params.id });
        });
        app.use('/internal', (_req, res) => {
          res.status(401).json({ code: 'unauthenticated', message: 'guard reached' });
        });
      },
    });
    running = await startServer(app, {
      host: '127.0.0.1',
      port: 0,
      logger,
      shutdownTimeoutMs: 2000,
    });
    return new URL(running.url);
  }

  /** GET with the path sent byte for byte (fetch would resolve its dot-segments first). */
  function rawGet(base: URL, path: string) {
    return new Promise<{ status: number; body: unknown }>((resolve, reject) => {
      const req = http.request(
        { host: base.hostname, port: base.port, path, method: 'GET' },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  it.each([
    '/internal/v1/revoked-keys/../../../docs',
    '/internal/v1/revoked-keys/%2e%2E/%2E./docs',
    '/docs/../internal/v1/revoked-keys',
    '/admin/v1/tenants%2F..%2F..%2F..%2Fdocs',
    '/v1/things/a%2F..',
    '/v1/things/.?x=1',
  ])(
    'when the raw path %s has a dot-segment, then 400 validation_error before any route or guard',
    async (path) => {
      const base = await start();
      const res = await rawGet(base, path);
      expect(res).toEqual({
        status: 400,
        body: { code: 'validation_error', message: expect.stringContaining('".."') },
      });
    },
  );

  it.each([
    ['/v1/things/john.doe', 'john.doe'],
    ['/v1/things/a..b', 'a..b'],
    ['/v1/things/...', '...'],
    ['/v1/things/%252e%252e', '%2e%2e'],
    ['/v1/things/a%2Fb', 'a/b'],
  ])('when the raw path %s has dots only inside a segment, then it is served', async (path, id) => {
    const base = await start();
    expect(await rawGet(base, path)).toEqual({ status: 200, body: { id } });
  });

  it('when a path is refused for a dot-segment, then the request log has neither the path nor a route', async () => {
    const base = await start();
    await rawGet(base, '/v1/things/someone%40example.com%2F..');
    await new Promise((r) => setTimeout(r, 20));
    const entry = JSON.parse(lines.find((l) => l.includes('"GET 400"')) ?? '{}') as object;
    expect(entry).toMatchObject({ res: { statusCode: 400 } });
    expect(entry).not.toHaveProperty('route');
    expect(lines.join('')).not.toMatch(/someone/);
  });
});
