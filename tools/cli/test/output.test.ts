import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { main } from '../src/cli.js';
import { repoRoot } from '../src/settings.js';
import { ADMIN_TOKEN, run, startFakeApi, TENANT, type FakeApi } from './support.js';

let api: FakeApi;
let dataDir: string;
beforeAll(async () => {
  api = await startFakeApi();
  dataDir = await mkdtemp(path.join(tmpdir(), 'herald-cli-'));
});
afterAll(async () => {
  await api.close();
  await rm(dataDir, { recursive: true, force: true });
});
beforeEach(() => {
  api.requests.length = 0;
});

const env = () => ({ HERALD_URL: api.url, ADMIN_TOKEN });
const key = {
  clientId: 'ck_abc',
  secret: 'sk_xyz',
  kind: 'secret',
  scopes: ['events:write', 'contacts:write'],
  createdAt: '2026-11-22T01:24:46.123Z',
};
const createKey = ['keys', 'create', '--tenant', TENANT];

describe('successful answers', () => {
  it('when nothing is asked, then the body is printed as pretty JSON', async () => {
    api.answer = { status: 201, body: key };

    const result = await run(createKey, env());

    expect(result).toEqual({ code: 0, stdout: `${JSON.stringify(key, null, 2)}\n`, stderr: '' });
  });

  it('when --json is given, then the body is one compact line', async () => {
    api.answer = { status: 201, body: key };

    const result = await run([...createKey, '--json'], env());

    expect(result.stdout).toBe(`${JSON.stringify(key)}\n`);
    expect(result.stdout.trim()).not.toContain('\n');
  });

  it.each([
    ['secret', 'sk_xyz'],
    ['clientId', 'ck_abc'],
    ['scopes', JSON.stringify(key.scopes, null, 2)],
    ['scopes.1', 'contacts:write'],
  ])('when --get %s is given, then only that value is printed, raw', async (field, printed) => {
    api.answer = { status: 201, body: key };

    const result = await run([...createKey, '--get', field], env());

    expect(result).toEqual({ code: 0, stdout: `${printed}\n`, stderr: '' });
  });

  it('when --get names a number or a nested field, then it prints as JSON text', async () => {
    api.answer = {
      status: 200,
      body: { state: 'suspended', consecutiveFailures: 3, eventNames: [{ name: 'signed_up' }] },
    };
    const show = ['billing', 'show', '--tenant', TENANT];

    expect((await run([...show, '--get', 'consecutiveFailures'], env())).stdout).toBe('3\n');
    expect((await run([...show, '--get', 'eventNames.0.name'], env())).stdout).toBe('signed_up\n');
    expect((await run([...show, '--get', 'eventNames', '--json'], env())).stdout).toBe(
      '[{"name":"signed_up"}]\n',
    );
  });

  it('when --get names a field the answer lacks, then exit code 1 and the fields it has', async () => {
    api.answer = { status: 201, body: key };

    const result = await run([...createKey, '--get', 'id'], env());

    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'error: the answer has no field "id" (its fields: clientId, secret, kind, scopes, createdAt)\n',
    });
  });

  it('when the answer is an export, then its JSON Lines are printed as they came, even a single line', async () => {
    const lines = '{"type":"contact","data":{"id":"c1"}}\n';
    api.answer = { status: 200, text: lines, headers: { 'content-type': 'application/x-ndjson' } };

    const result = await run(['contacts', 'export', '--tenant', TENANT, '--contact', 'c1'], env());

    expect(result).toEqual({ code: 0, stdout: lines, stderr: '' });
    const refused = await run(
      ['contacts', 'export', '--tenant', TENANT, '--contact', 'c1', '--json'],
      env(),
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/prints what comes as it comes: no --get or --json/);
  });

  it('when the answer is 204, then nothing is printed and the exit code is 0', async () => {
    api.answer = { status: 204 };

    const result = await run(
      ['keys', 'revoke', '--tenant', TENANT, '--client-id', 'ck_abc'],
      env(),
    );

    expect(result).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('when the answer is 204 and --get is given, then exit code 1 says the answer is empty', async () => {
    api.answer = { status: 204 };

    const result = await run(
      ['keys', 'revoke', '--tenant', TENANT, '--client-id', 'ck_abc', '--get', 'id'],
      env(),
    );

    expect(result.code).toBe(1);
    expect(result.stderr).toBe('error: the answer is empty, so it has no field "id"\n');
  });
});

describe('error answers', () => {
  it.each([
    [401, { code: 'unauthenticated', message: 'missing or wrong admin token' }],
    [404, { code: 'not_found', message: 'no such tenant' }],
    [400, { code: 'validation_error', message: 'body.name: too short' }],
  ])(
    'when the API answers %i with {code,message}, then stderr has it and the exit code is 1',
    async (status, body) => {
      api.answer = { status, body };

      const result = await run(['tenants', 'create', '--name', 'A'], env());

      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr: `error: ${body.code}: ${body.message} (HTTP ${status})\n`,
      });
    },
  );

  it('when the answer is problem+json, then its type and detail are shown', async () => {
    api.answer = {
      status: 402,
      body: {
        type: 'subscription_suspended',
        title: 'Payment required',
        status: 402,
        detail: 'suspended',
      },
      headers: { 'content-type': 'application/problem+json' },
    };

    const result = await run(['tenants', 'create', '--name', 'A'], env());

    expect(result.stderr).toBe('error: subscription_suspended: suspended (HTTP 402)\n');
  });

  it('when the answer is not JSON, then the status stands in for the code', async () => {
    api.answer = { status: 502, text: '<html>Bad Gateway</html>\n<p>nginx</p>' };

    const result = await run(['tenants', 'create', '--name', 'A'], env());

    expect(result).toMatchObject({
      code: 1,
      stderr: 'error: http_502: <html>Bad Gateway</html> (HTTP 502)\n',
    });
  });

  it('when nothing listens at HERALD_URL, then the URL is named, npm start is hinted, exit code 1', async () => {
    const closed = await startFakeApi();
    await closed.close();

    const result = await run(['tenants', 'create', '--name', 'A'], {
      ...env(),
      HERALD_URL: closed.url,
    });

    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`could not reach POST ${closed.url}/admin/v1/tenants`);
    expect(result.stderr).toContain('ECONNREFUSED');
    expect(result.stderr).toContain('npm start');
  });

  it('when HERALD_URL is not a URL, then exit code 1 names it', async () => {
    const result = await run(['tenants', 'create', '--name', 'A'], {
      ...env(),
      HERALD_URL: 'localhost',
    });

    expect(result).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('HERALD_URL is not a URL'),
    });
  });
});

describe('the admin token', () => {
  const tenantsCreate = ['tenants', 'create', '--name', 'A'];

  it('when ADMIN_TOKEN is unset, then the token file in HERALD_DATA_DIR is used, trimmed', async () => {
    await writeFile(path.join(dataDir, 'admin-token'), 'from-the-file\n');
    api.answer = { status: 201, body: {} };

    const result = await run(tenantsCreate, { HERALD_URL: api.url, HERALD_DATA_DIR: dataDir });

    expect(result.code).toBe(0);
    expect(api.requests[0]?.headers.authorization).toBe('Bearer from-the-file');
  });

  it('when ADMIN_TOKEN is set, then it wins over the file; when empty, the file is used', async () => {
    await writeFile(path.join(dataDir, 'admin-token'), 'from-the-file\n');
    const fileEnv = { HERALD_URL: api.url, HERALD_DATA_DIR: dataDir };

    await run(tenantsCreate, { ...fileEnv, ADMIN_TOKEN: 'from-env' });
    await run(tenantsCreate, { ...fileEnv, ADMIN_TOKEN: '' });

    expect(api.requests.map((r) => r.headers.authorization)).toEqual([
      'Bearer from-env',
      'Bearer from-the-file',
    ]);
  });

  it('when there is neither, then exit code 1 names ADMIN_TOKEN and the file, nothing sent', async () => {
    const result = await run(tenantsCreate, {
      HERALD_URL: api.url,
      HERALD_DATA_DIR: 'no-such-dir',
    });

    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `error: no admin token: set ADMIN_TOKEN, or start the local stack (npm start), which writes ${path.join(repoRoot, 'no-such-dir', 'admin-token')}\n`,
    );
    expect(api.requests).toHaveLength(0);
  });

  it('when asking for help, then no token is needed', async () => {
    expect((await run(['help'], { HERALD_DATA_DIR: 'no-such-dir' })).code).toBe(0);
  });
});

describe('events live', () => {
  it('when the stream brings an Event and then ends without Ctrl-C, then the Event is one JSON line and the end an error (exit 1)', async () => {
    api.answer = {
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      text: 'retry: 3000\n\nevent: recorded\nid: e1\ndata: {"id":"e1","eventName":"Signed Up"}\n\nevent: skipped\ndata: {"count":3,"atLeast":false}\n\n',
    };
    let stdout = '';
    let stderr = '';
    const code = await main(['events', 'live', '--tenant', TENANT], env(), {
      stdout: (text) => (stdout += text),
      stderr: (text) => (stderr += text),
      untilStopped: () => new Promise<void>(() => {}),
    });
    expect(code).toBe(1);
    expect(stdout).toBe('{"id":"e1","eventName":"Signed Up"}\n');
    expect(stderr).toBe(
      'events live: 3 events not shown\nerror: the stream ended (the server closed it); run the command again\n',
    );
  });

  it('when Ctrl-C comes before any answer, then it stops at once with exit code 0', async () => {
    const silent = createServer(() => {});
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    try {
      const code = await main(
        ['events', 'live', '--tenant', TENANT],
        { HERALD_URL: url, ADMIN_TOKEN },
        {
          stdout: () => {},
          stderr: () => {},
          untilStopped: () => new Promise<void>((resolve) => setTimeout(resolve, 100)),
        },
      );
      expect(code).toBe(0);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});
