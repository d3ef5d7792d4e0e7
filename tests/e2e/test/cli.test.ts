// The built operator CLI (tools/cli/dist/main.js) as a child process, against the running
// stack through the ingress. Needs `npm start` (or a deployed stack at HERALD_INGRESS_URL)
// and a built CLI (`npm run build`).
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from '@jest/globals';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const cliPath = path.join(repoRoot, 'tools', 'cli', 'dist', 'main.js');
const ingressUrl = (process.env.HERALD_INGRESS_URL ?? 'http://localhost:8080').replace(/\/+$/, '');

/** ADMIN_TOKEN, else the local stack's token file, as the CLI itself resolves it. */
function adminToken(): string {
  if (process.env.ADMIN_TOKEN) return process.env.ADMIN_TOKEN;
  const dataDir = path.resolve(repoRoot, process.env.HERALD_DATA_DIR || '.herald');
  return readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
}

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node tools/cli/dist/main.js <args>` with the ingress URL and the admin token. */
function cli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    HERALD_URL: ingressUrl,
    ADMIN_TOKEN: adminToken(),
    ...env,
  };
  delete childEnv.NODE_OPTIONS; // jest's VM flags are not the CLI's business
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cliPath, ...args],
      { env: childEnv, timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

function exchange(clientId: string, secret: string): Promise<Response> {
  return fetch(`${ingressUrl}/v1/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
    },
  });
}

beforeAll(() => {
  if (!existsSync(cliPath)) {
    throw new Error(`${cliPath} is missing: build the CLI first (npm run build)`);
  }
});

describe('herald-admin against the running stack', () => {
  it('when a tenant is created with --get id, then only its id is printed and the exit code is 0', async () => {
    const result = await cli(['tenants', 'create', '--name', 'CLI e2e', '--get', 'id']);

    expect(result).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^[0-9a-f-]{36}\n$/),
      stderr: '',
    });
  });

  it('when a secret key is created and then revoked with the CLI, then it exchanges before and answers 401 invalid_client after', async () => {
    const tenant = await cli(['tenants', 'create', '--name', 'CLI e2e keys', '--get', 'id']);
    expect(tenant.code).toBe(0);
    const tenantId = tenant.stdout.trim();

    const created = await cli(['keys', 'create', '--tenant', tenantId, '--json']);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(created.stdout.trim()).not.toContain('\n');
    const key = JSON.parse(created.stdout);
    expect(key).toMatchObject({
      clientId: expect.stringMatching(/^ck_/),
      secret: expect.stringMatching(/^sk_/),
      kind: 'secret',
    });

    const before = await exchange(key.clientId, key.secret);
    expect(before.status).toBe(200);
    expect(await before.json()).toMatchObject({
      tokenType: 'Bearer',
      accessToken: expect.any(String),
    });

    const revoked = await cli([
      'keys',
      'revoke',
      '--tenant',
      tenantId,
      '--client-id',
      key.clientId,
    ]);
    expect(revoked).toEqual({ code: 0, stdout: '', stderr: '' });

    const after = await exchange(key.clientId, key.secret);
    expect(after.status).toBe(401);
    expect(await after.json()).toMatchObject({ code: 'invalid_client' });
  });

  it('when the admin token is wrong, then the exit code is 1 and stderr says unauthenticated', async () => {
    const result = await cli(['tenants', 'create', '--name', 'Nope'], {
      ADMIN_TOKEN: 'not-the-admin-token',
    });

    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^error: unauthenticated: .+ \(HTTP 401\)\n$/);
  });

  it('when a tenant is unknown, then the exit code is 1 and stderr says not_found', async () => {
    const result = await cli([
      'keys',
      'create',
      '--tenant',
      '00000000-0000-4000-8000-000000000000',
    ]);

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: not_found: .+ \(HTTP 404\)\n$/);
  });
});
