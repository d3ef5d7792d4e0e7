import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { commands } from '../src/commands.js';
import { repoRoot } from '../src/settings.js';
import { ADMIN_TOKEN, run, startFakeApi, TENANT, type FakeApi } from './support.js';

let api: FakeApi;
beforeAll(async () => {
  api = await startFakeApi();
});
afterAll(() => api.close());
beforeEach(() => {
  api.requests.length = 0;
  api.answer = { status: 200, body: {} };
});

const env = () => ({ HERALD_URL: api.url, ADMIN_TOKEN });
const base = `/admin/v1/tenants/${TENANT}`;

describe('the command table', () => {
  it('when compared with the operator routes of the API reference, then every route has exactly one command', () => {
    // The OpenAPI document `npm run generate` writes from the services' manifests.
    const document = JSON.parse(
      readFileSync(path.join(repoRoot, 'libs/api-reference/openapi.json'), 'utf8'),
    ) as { paths: Record<string, Record<string, unknown>> };
    const shape = (route: string) => route.replace(/\?.*$/, '').replace(/\{[^}]+\}/g, '{}');
    const operatorRoutes = Object.entries(document.paths)
      .filter(([route]) => route.startsWith('/admin/'))
      .flatMap(([route, operations]) =>
        Object.keys(operations)
          .filter((method) => ['get', 'post', 'put', 'delete', 'patch'].includes(method))
          .map((method) => `${method.toUpperCase()} ${shape(route)}`),
      );
    expect(commands.map((c) => `${c.method} ${shape(c.path)}`).sort()).toEqual(
      operatorRoutes.sort(),
    );
  });

  it('when a path has a {placeholder}, then it names a required option of that command', () => {
    for (const command of commands) {
      for (const [, name] of command.path.matchAll(/\{([^}]+)\}/g)) {
        expect(command.flags[name!]?.required).toBe(true);
      }
    }
  });

  it('when two commands are listed, then no two share a group and action', () => {
    const names = commands.map((c) => `${c.group} ${c.action}`);
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('requests', () => {
  it.each([
    [
      ['tenants', 'create', '--name', 'Acme Inc'],
      'POST',
      '/admin/v1/tenants',
      { name: 'Acme Inc' },
    ],
    [
      ['tenants', 'delete', '--tenant', TENANT, '--confirm', TENANT],
      'DELETE',
      `${base}?confirm=${TENANT}`,
      undefined,
    ],
    [['tenants', 'list'], 'GET', '/admin/v1/tenants', undefined],
    [
      ['tenants', 'list', '--search', 'Acme & Co', '--limit', '10', '--cursor', 'abc'],
      'GET',
      '/admin/v1/tenants?search=Acme+%26+Co&limit=10&cursor=abc',
      undefined,
    ],
    [['tenants', 'show', '--tenant', TENANT], 'GET', base, undefined],
    [
      ['organizations', 'list', '--tenant', TENANT, '--limit', '2', '--cursor', 'b3Jn'],
      'GET',
      `${base}/organizations?limit=2&cursor=b3Jn`,
      undefined,
    ],
    [
      ['contacts', 'find', '--tenant', TENANT, '--identity', 'a/b c'],
      'GET',
      `${base}/contacts?identity=a%2Fb%20c`,
      undefined,
    ],
    [
      ['contacts', 'erase', '--tenant', TENANT, '--contact', 'c1'],
      'POST',
      `${base}/contacts/c1/erase`,
      undefined,
    ],
    [['keys', 'list', '--tenant', TENANT], 'GET', `${base}/api-keys`, undefined],
    [['keys', 'create', '--tenant', TENANT], 'POST', `${base}/api-keys`, { kind: 'secret' }],
    [
      ['keys', 'create', '--tenant', TENANT, '--kind', 'publishable', '--name', 'web'],
      'POST',
      `${base}/api-keys`,
      { kind: 'publishable', name: 'web' },
    ],
    [
      [
        'keys',
        'create',
        '--tenant',
        TENANT,
        '--kind',
        'publishable',
        '--identifier-lookup',
        'yes',
        '--allowed-origins',
        'https://shop.example.com, http://localhost:5173',
      ],
      'POST',
      `${base}/api-keys`,
      {
        kind: 'publishable',
        identifierLookup: true,
        allowedOrigins: ['https://shop.example.com', 'http://localhost:5173'],
      },
    ],
    [
      ['keys', 'create', '--tenant', TENANT, '--scopes', 'events:write, contacts:read,'],
      'POST',
      `${base}/api-keys`,
      { kind: 'secret', scopes: ['events:write', 'contacts:read'] },
    ],
    [
      ['keys', 'revoke', '--tenant', TENANT, '--client-id', 'ck_abc'],
      'POST',
      `${base}/api-keys/ck_abc/revoke`,
      undefined,
    ],
    [
      [
        'organizations',
        'create',
        '--tenant',
        TENANT,
        '--external-id',
        'org/42',
        '--name',
        'Globex',
      ],
      'POST',
      `${base}/organizations`,
      { externalId: 'org/42', name: 'Globex' },
    ],
    [
      ['organizations', 'create', '--tenant', TENANT, '--external-id', 'org-7'],
      'POST',
      `${base}/organizations`,
      { externalId: 'org-7' },
    ],
    [['billing', 'show', '--tenant', TENANT], 'GET', `${base}/billing`, undefined],
    [
      ['billing', 'payment-failed', '--tenant', TENANT],
      'POST',
      `${base}/billing/payment-failures`,
      undefined,
    ],
    [
      ['billing', 'payment-updated', '--tenant', TENANT],
      'POST',
      `${base}/billing/payment-details`,
      undefined,
    ],
    [['event-names', 'list', '--tenant', TENANT], 'GET', `${base}/event-names`, undefined],
    [['event-retention', 'show', '--tenant', TENANT], 'GET', `${base}/event-retention`, undefined],
    [
      ['event-retention', 'set', '--tenant', TENANT, '--days', '90'],
      'PUT',
      `${base}/event-retention`,
      { days: 90 },
    ],
    [
      ['event-retention', 'set', '--tenant', TENANT, '--days', 'default'],
      'PUT',
      `${base}/event-retention`,
      { days: null },
    ],
  ])('when running %j, then it sends %s %s with body %j', async (argv, method, path, body) => {
    const result = await run(argv, env());

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(api.requests).toHaveLength(1);
    const [request] = api.requests;
    expect(request).toMatchObject({ method, path });
    expect(request!.headers.authorization).toBe(`Bearer ${ADMIN_TOKEN}`);
    expect(request!.headers.accept).toBe('application/json');
    if (body === undefined) {
      expect(request!.body).toBe('');
      expect(request!.headers['content-type']).toBeUndefined();
    } else {
      expect(JSON.parse(request!.body)).toEqual(body);
      expect(request!.headers['content-type']).toBe('application/json');
    }
  });

  it('when options come before the command words, then the same request is sent', async () => {
    const result = await run(['--json', '--tenant', TENANT, 'billing', 'show'], env());

    expect(result.code).toBe(0);
    expect(api.requests[0]).toMatchObject({ method: 'GET', path: `${base}/billing` });
  });

  it('when ids hold reserved characters, then each path segment is percent-encoded once', async () => {
    await run(['keys', 'revoke', '--tenant', 'a/b c?#', '--client-id', 'ck/../x%2F'], env());

    expect(api.requests[0]?.path).toBe(
      '/admin/v1/tenants/a%2Fb%20c%3F%23/api-keys/ck%2F..%2Fx%252F/revoke',
    );
  });

  it('when the confirmation holds reserved characters, then it is percent-encoded in the query', async () => {
    await run(['tenants', 'delete', '--tenant', TENANT, '--confirm', 'a&b=c d'], env());

    expect(api.requests[0]?.path).toBe(`${base}?confirm=a%26b%3Dc%20d`);
  });

  it('when a deletion is under way, then its answer is printed; once it is done, the 404 is an error (exit 1)', async () => {
    const deleting = { id: TENANT, status: 'deleting', requestedAt: '2026-11-22T01:24:46.123Z' };
    api.answer = { status: 202, body: deleting };
    const argv = ['tenants', 'delete', '--tenant', TENANT, '--confirm', TENANT];

    expect(await run([...argv, '--get', 'status'], env())).toEqual({
      code: 0,
      stdout: 'deleting\n',
      stderr: '',
    });

    api.answer = { status: 404, body: { code: 'not_found', message: 'no such tenant' } };
    expect(await run(argv, env())).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: not_found: no such tenant (HTTP 404)\n',
    });
  });

  it('when HERALD_URL has a path prefix and a trailing slash, then the routes go under it', async () => {
    await run(['tenants', 'create', '--name', 'Acme'], {
      ...env(),
      HERALD_URL: `${api.url}/herald/`,
    });

    expect(api.requests[0]?.path).toBe('/herald/admin/v1/tenants');
  });
});

describe('event retention', () => {
  it('when the retention is shown with --get days, then only the number is printed', async () => {
    api.answer = { status: 200, body: { days: 730, source: 'default', defaultDays: 730 } };

    const result = await run(
      ['event-retention', 'show', '--tenant', TENANT, '--get', 'days'],
      env(),
    );

    expect(result).toEqual({ code: 0, stdout: '730\n', stderr: '' });
  });

  it('when the API refuses the number of days, then its validation error is printed and the exit code is 1', async () => {
    api.answer = {
      status: 400,
      body: {
        code: 'validation_error',
        message: 'body.days: Too big: expected number to be <=3650',
      },
    };

    const result = await run(
      ['event-retention', 'set', '--tenant', TENANT, '--days', '5000'],
      env(),
    );

    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'error: validation_error: body.days: Too big: expected number to be <=3650 (HTTP 400)\n',
    });
    expect(JSON.parse(api.requests[0]!.body)).toEqual({ days: 5000 });
  });
});
