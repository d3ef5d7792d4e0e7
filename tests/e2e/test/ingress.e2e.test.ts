import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { checkAnswer } from '@herald/testing';
import { adminToken, headerReader, INGRESS, repoRoot } from './support.js';

/** nginx's JSON access log of the local stack (absent when INGRESS is some other stack). */
const accessLog = path.join(
  path.resolve(repoRoot, process.env.HERALD_DATA_DIR || '.herald'),
  'logs',
  'nginx-access.log',
);

/**
 * The access-log line of one request, found by its X-Request-Id (nginx logs after answering),
 * read from `from` (the log's size before the request was sent) on: the whole log of a long-used
 * stack can be hundreds of megabytes.
 */
async function accessLogLine(requestId: string, from: number): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const line = logSince(from)
      .split('\n')
      .find((l) => l.includes(`"request_id":"${requestId}"`));
    if (line) return JSON.parse(line) as Record<string, unknown>;
    if (Date.now() > deadline) throw new Error(`no access log line for ${requestId}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** What the access log holds past byte `from`. */
function logSince(from: number): string {
  const fd = openSync(accessLog, 'r');
  try {
    const length = Math.max(0, fstatSync(fd).size - from);
    const buffer = Buffer.alloc(length);
    const read = readSync(fd, buffer, 0, length, from);
    return buffer.toString('utf8', 0, read);
  } finally {
    closeSync(fd);
  }
}

/** What the checks below read of an answer; fetch's Response has it, and so has rawRequest's. */
interface Answer {
  status: number;
  headers: { get(name: string): string | null };
  json(): Promise<unknown>;
}

/** A request through node:http, for what fetch refuses to send (TRACE); contract-checked too. */
function rawRequest(method: string, route: string, headers: Record<string, string> = {}) {
  return new Promise<Answer>((resolve, reject) => {
    const url = `${INGRESS}${route}`;
    const req = http.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const answer = { status: res.statusCode ?? 0, headers: headerReader(res.headers) };
        checkAnswer(method, url, { ...answer, body }).then(
          () => resolve({ ...answer, json: async () => JSON.parse(body) as unknown }),
          reject,
        );
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** nginx's own error answers: JSON in the documented shape, a request id, CORS for browsers. */
async function expectIngressError(res: Answer, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.headers.get('x-request-id')).toBeTruthy();
  expect(res.headers.get('access-control-allow-origin')).toBe('*');
  expect(await res.json()).toEqual({ code, message: expect.any(String) });
}

describe('the ingress', () => {
  it.each([
    ['GET', '/v2/contacts/x'],
    ['POST', '/v1/nothing-here'],
    ['GET', '/'],
    ['DELETE', '/v1'],
    ['GET', '/__herald/error/503'],
  ])(
    'when %s %s names no route, then 404 not_found as JSON with a request id',
    async (method, route) => {
      const res = await fetch(`${INGRESS}${route}`, { method });
      await expectIngressError(res, 404, 'not_found');
    },
  );

  it('when a body is over 1 MiB, then 413 payload_too_large as JSON, with CORS', async () => {
    const res = await fetch(`${INGRESS}/v1/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ filler: 'x'.repeat(2 * 1024 * 1024) }),
    });
    await expectIngressError(res, 413, 'payload_too_large');
  });

  it('when the path has malformed percent-encoding, then 400 validation_error as JSON', async () => {
    // fetch leaves "%zz" as it is (the URL parser does not decode paths): nginx sees it raw.
    expect(new URL(`${INGRESS}/v1/tok%zz`).pathname).toBe('/v1/tok%zz');
    const res = await fetch(`${INGRESS}/v1/tok%zz`);
    await expectIngressError(res, 400, 'validation_error');
  });

  it('when the URI is over 8 KiB, then 414 validation_error as JSON', async () => {
    const res = await fetch(`${INGRESS}/v1/${'a'.repeat(16 * 1024)}`);
    await expectIngressError(res, 414, 'validation_error');
  });

  // fetch refuses to send TRACE; nginx answers it itself, before any route.
  it.each([
    ['/v1/token', 'POST'],
    ['/v1/contacts/someone', 'GET, PUT'],
    ['/v1/contacts/someone/', 'GET, PUT'],
    ['/v1/contacts/by-id/x/erase', 'POST'],
    ['/admin/v1/tenants/x/billing?at=now', 'GET'],
    ['/docs', 'GET'],
    ['/docs/assets/reference.js', 'GET'],
  ])(
    'when the method is TRACE on %s, then 405 method_not_allowed as JSON, echoing the request id, with Allow: %s',
    async (route, allow) => {
      const res = await rawRequest('TRACE', route, { 'x-request-id': 'e2e-trace' });
      expect(res.headers.get('x-request-id')).toBe('e2e-trace');
      expect(res.headers.get('allow')).toBe(allow);
      await expectIngressError(res, 405, 'method_not_allowed');
      // The service's own 405 there names the same (operator paths ask for the token first).
      const other = await fetch(`${INGRESS}${route}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${adminToken()}` },
      });
      expect(other.status).toBe(405);
      expect(other.headers.get('allow')).toBe(allow);
      await other.arrayBuffer();
    },
  );

  it.each(['/v1/nothing', '/v1/token/', '/docs/assets/', '/healthz', '/'])(
    'when the method is TRACE on %s, which names no route, then 404 not_found as for any method',
    async (route) => {
      const res = await rawRequest('TRACE', route, { 'x-request-id': 'e2e-trace-404' });
      expect(res.headers.get('x-request-id')).toBe('e2e-trace-404');
      expect(res.headers.get('allow')).toBeNull();
      await expectIngressError(res, 404, 'not_found');
    },
  );

  (existsSync(accessLog) ? it : it.skip)(
    'when a caller sends its own X-Forwarded-For, then the service gets the peer address instead',
    async () => {
      const requestId = `e2e-xff-${randomUUID()}`;
      const logSize = statSync(accessLog).size;
      const res = await fetch(`${INGRESS}/v1/token`, {
        method: 'POST',
        headers: { 'x-request-id': requestId, 'x-forwarded-for': '203.0.113.7' },
      });
      expect(res.status).toBe(401); // answered by the auth service, so it went upstream
      const line = await accessLogLine(requestId, logSize);
      // `forwarded_for` is the very variable the ingress sends upstream as X-Forwarded-For.
      expect(line.client_forwarded_for).toBe('203.0.113.7');
      expect(line.forwarded_for).toBe(line.remote_addr);
      expect(String(line.forwarded_for)).not.toContain('203.0.113.7');
      expect(line.upstream_addr).toBeTruthy();
    },
  );

  it('when the service internals are asked for, then the ingress does not expose them', async () => {
    for (const route of ['/healthz', '/readyz', '/.well-known/jwks.json']) {
      expect((await fetch(`${INGRESS}${route}`)).status).toBe(404);
    }
  });
});
