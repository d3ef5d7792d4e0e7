import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppError } from '@herald/errors';
import { createInternalClient } from '../../src/index.js';

// A stand-in for another Herald service: each test sets how it answers.
let handler: (req: IncomingMessage, body: string, res: ServerResponse) => void;
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => handler(req, body, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const client = (overrides: { baseUrl?: string; timeoutMs?: number } = {}) =>
  createInternalClient({
    baseUrl: overrides.baseUrl ?? `${baseUrl}/`,
    serviceToken: 'svc-token',
    serviceName: 'the other service',
    timeoutMs: overrides.timeoutMs ?? 2_000,
  });

describe('createInternalClient', () => {
  it('when it calls, then the bearer service token, the JSON body and the request id are sent', async () => {
    const seen: Array<Record<string, unknown>> = [];
    handler = (req, body, res) => {
      seen.push({
        method: req.method,
        url: req.url,
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        requestId: req.headers['x-request-id'],
        body,
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    };
    const answer = await client().call({
      method: 'POST',
      path: '/internal/v1/things',
      json: { a: 1 },
      requestId: 'req-1',
      consequence: 'retry later',
    });
    expect(answer).toEqual({ status: 200, text: '{"ok":true}' });
    expect(seen).toEqual([
      {
        method: 'POST',
        url: '/internal/v1/things',
        authorization: 'Bearer svc-token',
        contentType: 'application/json',
        requestId: 'req-1',
        body: '{"a":1}',
      },
    ]);
  });

  it('when the service answers 4xx, then the status is the caller’s to judge', async () => {
    handler = (_req, _body, res) => res.writeHead(404).end('gone');
    expect(await client().call({ path: '/x', consequence: 'retry later' })).toEqual({
      status: 404,
      text: 'gone',
    });
  });

  it('when the service answers 5xx, then the 503 service_unavailable with Retry-After', async () => {
    handler = (_req, _body, res) => res.writeHead(502).end();
    const answer = client().call({ path: '/x', consequence: 'nothing was done; retry later' });
    await expect(answer).rejects.toBeInstanceOf(AppError);
    await expect(answer).rejects.toMatchObject({
      status: 503,
      code: 'service_unavailable',
      headers: { 'Retry-After': '5' },
      message: 'the other service answered 502; nothing was done; retry later',
    });
  });

  it('when nothing listens, then the 503 names the service and keeps the cause', async () => {
    const answer = client({ baseUrl: 'http://127.0.0.1:9' }).call({
      path: '/x',
      consequence: 'retry later',
    });
    await expect(answer).rejects.toMatchObject({
      status: 503,
      code: 'service_unavailable',
      message: 'cannot reach the other service; retry later',
    });
    await answer.catch((err: AppError) => expect(err.cause).toBeDefined());
  });

  it('when the answer does not come in time, then a 503 after the timeout', async () => {
    handler = () => {};
    const started = Date.now();
    const answer = client({ timeoutMs: 200 }).call({ path: '/x', consequence: 'retry later' });
    await expect(answer).rejects.toMatchObject({ status: 503 });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('when the body stalls and the timeout covers the answer, then reading it fails in time', async () => {
    handler = (_req, _body, res) => {
      res.writeHead(200);
      res.write('partial');
    };
    const res = await client({ timeoutMs: 200 }).send({ path: '/x' });
    await expect(res.text()).rejects.toThrow();
  });

  it('when the timeout covers the headers only, then a slow body still arrives whole', async () => {
    handler = (_req, _body, res) => {
      res.writeHead(200);
      res.write('first ');
      setTimeout(() => res.end('second'), 400);
    };
    const res = await client({ timeoutMs: 200 }).send({ path: '/x', timeoutCovers: 'headers' });
    expect(await res.text()).toBe('first second');
  });

  it('when the headers do not come in time and the timeout covers them only, then the send fails', async () => {
    handler = () => {};
    const send = client({ timeoutMs: 200 }).send({ path: '/x', timeoutCovers: 'headers' });
    await expect(send).rejects.toThrow();
  });

  it('when a call has its answer, then its timer is stopped, not left to fire later', async () => {
    handler = (_req, _body, res) => res.writeHead(200).end('{}');
    const timeouts = jest.spyOn(AbortSignal, 'timeout');
    const set = jest.spyOn(globalThis, 'setTimeout');
    const cleared = jest.spyOn(globalThis, 'clearTimeout');
    try {
      await client({ timeoutMs: 1_234 }).call({ path: '/x', consequence: 'retry later' });
      expect(timeouts).not.toHaveBeenCalled();
      const timers = set.mock.calls.flatMap(([, ms], i) =>
        ms === 1_234 ? [set.mock.results[i]!.value] : [],
      );
      expect(timers).toHaveLength(1);
      expect(cleared.mock.calls.map(([timer]) => timer)).toContain(timers[0]);
    } finally {
      timeouts.mockRestore();
      set.mockRestore();
      cleared.mockRestore();
    }
  });

  it('when the body is discarded, then its text is empty and only the status counts', async () => {
    handler = (_req, _body, res) => res.writeHead(200).end('{"id":"x"}');
    expect(
      await client().call({ path: '/x', body: 'discard', consequence: 'retry later' }),
    ).toEqual({ status: 200, text: '' });
  });

  it('when asked for a URL, then the path is joined to the base without a double slash', () => {
    expect(client({ baseUrl: 'http://svc:8080//' }).url('/internal/v1/x')).toBe(
      'http://svc:8080/internal/v1/x',
    );
    expect(client().unavailable(409, 'retry later')).toMatchObject({
      status: 503,
      message: 'the other service answered 409; retry later',
    });
  });
});
