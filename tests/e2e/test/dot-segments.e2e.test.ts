// Paths with dot-segments (`.` or `..`, plain or percent-encoded, between `/` or `%2F`). nginx
// chooses a location by the path with them resolved but forwards the raw path, so
// `/internal/v1/revoked-keys/../../../docs` would reach the auth service's internal routes
// through the `/docs` location. The ingress refuses such a path before routing it, and every
// service refuses it too, for a caller that reaches a service without the ingress. Dots inside
// a segment are an externalId's own business. Most requests go through node:http: fetch resolves
// `.`, `..` and `%2e` segments (not those between `%2F`s) before sending.
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { checkAnswer } from '@herald/testing';
import {
  accessToken,
  call,
  dataDir,
  headerReader,
  INGRESS,
  newTenant,
  repoRoot,
} from './support.js';

/** nginx's JSON access log of the local stack (absent when INGRESS is some other stack). */
const accessLog = path.join(dataDir, 'logs', 'nginx-access.log');

/** The access-log line of the request with this X-Request-Id (nginx writes it after answering). */
async function accessLogLine(requestId: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    // The log's last 1 MiB: the line was written moments ago.
    const fd = openSync(accessLog, 'r');
    let text: string;
    try {
      const size = fstatSync(fd).size;
      const length = Math.min(size, 1024 * 1024);
      const buffer = Buffer.alloc(length);
      text = buffer.toString('utf8', 0, readSync(fd, buffer, 0, length, size - length));
    } finally {
      closeSync(fd);
    }
    const line = text.split('\n').find((l) => l.includes(`"request_id":"${requestId}"`));
    if (line) return JSON.parse(line) as Record<string, unknown>;
    if (Date.now() > deadline) throw new Error(`no access log line for ${requestId}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface RawAnswer {
  status: number;
  headers: { get(name: string): string | null };
  body: unknown;
}

/**
 * `method` `base` + `rawPath`, the path sent byte for byte, with a JSON body when given; answers
 * from the ingress are contract-checked.
 */
function rawRequest(
  method: string,
  base: string,
  rawPath: string,
  headers: Record<string, string> = {},
  body?: unknown,
) {
  const { hostname, port } = new URL(base);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise<RawAnswer>((resolve, reject) => {
    const req = http.request(
      {
        host: hostname === 'localhost' ? '127.0.0.1' : hostname,
        port,
        path: rawPath,
        method,
        headers:
          payload === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('error', reject);
        res.on('end', () => {
          const answer = { status: res.statusCode ?? 0, headers: headerReader(res.headers) };
          checkAnswer(method, `${base}${rawPath}`, { ...answer, body: text }).then(
            () => resolve({ ...answer, body: JSON.parse(text) as unknown }),
            reject,
          );
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const rawGet = (base: string, rawPath: string, headers: Record<string, string> = {}) =>
  rawRequest('GET', base, rawPath, headers);

function expectRefused(res: RawAnswer) {
  expect(res.status).toBe(400);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.headers.get('x-request-id')).toBeTruthy();
  expect(res.headers.get('www-authenticate')).toBeNull();
  expect(res.body).toStrictEqual({ code: 'validation_error', message: expect.any(String) });
}

/** Each Herald process's base URL on the local stack (HERALD_<NAME>_PORT moves one). */
const processes = (
  JSON.parse(
    readFileSync(path.join(repoRoot, 'tools', 'stack', 'src', 'processes.generated.json'), 'utf8'),
  ) as { name: string; port: number }[]
).map(({ name, port }) => {
  const moved = process.env[`HERALD_${name.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_PORT`];
  return [name, `http://127.0.0.1:${moved ? Number(moved) : port}`] as const;
});

/** Raw paths with a dot-segment, each routed by nginx's resolved path to a location of a service. */
const DOT_SEGMENT_PATHS = [
  // resolves to /docs: the auth service's internal route guard (401, realm herald-internal)
  '/internal/v1/revoked-keys/../../../docs',
  // resolves to /docs: the auth service's operator guard (401, realm herald-admin)
  '/admin/v1/tenants%2F..%2F..%2F..%2Fdocs',
  '/internal/v1/revoked-keys/%2e%2e/%2E%2E/%2e./docs',
  '/admin/v1/tenants%2f.%2E%2f%2E.%2F..%2fdocs',
  // resolves to /v1/token: the auth service's internal route guard
  '/internal/v1/tenants/x/../../../../v1/token',
  '/v1/events/by-email/..',
  '/v1/contacts/x/%2e%2e/..%2Fevents/by-email',
  '/v1/./contacts',
  '/v1/contacts/someone/.?x=1',
];

describe('a path with dot-segments', () => {
  it.each(DOT_SEGMENT_PATHS)(
    'when %s is sent to the ingress, then 400 validation_error as JSON, before any route',
    async (rawPath) => {
      const requestId = `e2e-dot-segment-${randomUUID()}`;
      const res = await rawGet(INGRESS, rawPath, { 'x-request-id': requestId });
      expectRefused(res);
      expect(res.headers.get('x-request-id')).toBe(requestId);
      // nginx's own answer (a service's would carry no CORS header on these paths)...
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      // ...sent without asking any service
      if (existsSync(accessLog)) {
        expect(await accessLogLine(requestId)).toMatchObject({ status: 400, upstream_addr: '' });
      }
    },
  );

  describe.each(processes)(
    'sent to the %s process directly, bypassing the ingress',
    (_name, base) => {
      it.each(DOT_SEGMENT_PATHS)(
        'when the raw path is %s, then 400 validation_error before any guard',
        async (rawPath) => {
          expectRefused(await rawGet(base, rawPath));
        },
      );
    },
  );
});

describe('an externalId with dots inside a segment', () => {
  let token: string;
  beforeAll(async () => {
    token = await accessToken(await newTenant('Dot segments'), ['contacts:read', 'contacts:write']);
  });

  // A Tenant of its own per run: each externalId is used exactly as written.
  it.each([
    ['john.doe', 'john.doe'],
    ['a..b', 'a..b'],
    ['...', '...'],
    ['.hidden', '.hidden'],
    ['%252e%252e', '%2e%2e'],
    ['a%2F...%2Fb', 'a/.../b'],
  ])(
    'when a Contact is PUT as %s, then it round-trips through the ingress as %s',
    async (encoded, externalId) => {
      const route = `/v1/contacts/${encoded}`;
      const email = `dots-${randomUUID().slice(0, 8)}@example.com`;
      const created = await call('PUT', route, token, { email });
      expect(created.status).toBe(201);
      expect((await created.json()).externalId).toBe(externalId);
      const read = await call('GET', route, token);
      expect(read.status).toBe(200);
      expect(await read.json()).toMatchObject({ externalId, email });
    },
  );

  // `..`, `a/..`, `../b` and `a/./b` as externalIds: a path segment, or, split at the slashes the
  // ingress decodes, one of its parts, is a dot-segment.
  it.each(['..', '%2E%2E', '.', '%2e', 'a%2F..', '..%2Fb', 'a%2F.%2Fb', 'a%2f%2E%2e'])(
    'when a Contact is PUT as %s, a dot-segment, then 400 validation_error',
    async (encoded) => {
      const res = await rawRequest(
        'PUT',
        INGRESS,
        `/v1/contacts/${encoded}`,
        { authorization: `Bearer ${token}` },
        { email: `dots-${randomUUID().slice(0, 8)}@example.com` },
      );
      expectRefused(res);
    },
  );

  it('when a PUT with a dot-segment also has a body over 1 MiB, then 413 payload_too_large, status and body alike', async () => {
    const res = await call('PUT', '/v1/contacts/a%2F..', token, {
      email: 'dots@example.com',
      filler: 'x'.repeat(2 * 1024 * 1024),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toStrictEqual({
      code: 'payload_too_large',
      message: expect.any(String),
    });
  });
});
