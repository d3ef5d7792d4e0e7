// The built operator CLI (tools/cli/dist/main.js) as a child process, against the running
// stack through the ingress. Needs `npm start` (or a deployed stack at HERALD_INGRESS_URL)
// and a built CLI (`npm run build`).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  accessToken,
  adminToken,
  basic,
  call,
  cliPath,
  exchange,
  INGRESS,
  newTenant,
  runCli,
} from './support.js';

beforeAll(() => {
  if (!existsSync(cliPath)) {
    throw new Error(`${cliPath} is missing: build the CLI first (npm run build)`);
  }
});

describe('herald-admin against the running stack', () => {
  it('when a tenant is created with --get id, then only its id is printed and the exit code is 0', async () => {
    const result = await runCli(['tenants', 'create', '--name', 'CLI e2e', '--get', 'id']);

    expect(result).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^[0-9a-f-]{36}\n$/),
      stderr: '',
    });
  });

  it('when a secret key is created and then revoked with the CLI, then it exchanges before and answers 401 invalid_client after', async () => {
    const tenant = await runCli(['tenants', 'create', '--name', 'CLI e2e keys', '--get', 'id']);
    expect(tenant.code).toBe(0);
    const tenantId = tenant.stdout.trim();

    const created = await runCli(['keys', 'create', '--tenant', tenantId, '--json']);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(created.stdout.trim()).not.toContain('\n');
    const key = JSON.parse(created.stdout);
    expect(key).toMatchObject({
      clientId: expect.stringMatching(/^ck_/),
      secret: expect.stringMatching(/^sk_/),
      kind: 'secret',
    });

    const before = await exchange(basic(key.clientId, key.secret));
    expect(before.status).toBe(200);
    expect(await before.json()).toMatchObject({
      tokenType: 'Bearer',
      accessToken: expect.any(String),
    });

    const revoked = await runCli([
      'keys',
      'revoke',
      '--tenant',
      tenantId,
      '--client-id',
      key.clientId,
    ]);
    expect(revoked).toEqual({ code: 0, stdout: '', stderr: '' });

    const after = await exchange(basic(key.clientId, key.secret));
    expect(after.status).toBe(401);
    expect(await after.json()).toMatchObject({ code: 'invalid_client' });
  });

  it('when tenants are listed by a search and a key listed after its revocation, then the list shows the tenant and the key revoked, without its secret', async () => {
    const name = `CLI e2e list ${Date.now()}`;
    const tenantId = (
      await runCli(['tenants', 'create', '--name', name, '--get', 'id'])
    ).stdout.trim();
    const key = JSON.parse(
      (await runCli(['keys', 'create', '--tenant', tenantId, '--json'])).stdout,
    );
    await runCli(['keys', 'revoke', '--tenant', tenantId, '--client-id', key.clientId]);

    const listed = await runCli(['tenants', 'list', '--search', name.toLowerCase(), '--json']);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual({
      tenants: [{ id: tenantId, name, createdAt: expect.any(String) }],
      nextCursor: null,
    });
    expect(await runCli(['tenants', 'show', '--tenant', tenantId, '--get', 'name'])).toEqual({
      code: 0,
      stdout: `${name}\n`,
      stderr: '',
    });

    const keys = await runCli(['keys', 'list', '--tenant', tenantId]);
    expect(keys.code).toBe(0);
    expect(keys.stdout).not.toContain(key.secret);
    expect(JSON.parse(keys.stdout).apiKeys).toEqual([
      expect.objectContaining({ clientId: key.clientId, revokedAt: expect.any(String) }),
    ]);
  });

  it("when a person's GDPR request comes by email, then the CLI finds the Contact, exports its Contact and Event through the ingress, and erases it", async () => {
    const tenantId = await newTenant('CLI e2e contacts');
    const token = await accessToken(tenantId, ['contacts:write', 'events:write']);
    const email = `cli-${Date.now()}@example.com`;
    const put = await call('PUT', '/v1/contacts/cli-gdpr', token, { email });
    expect(put.status).toBe(201);
    const contact = await put.json<{ id: string }>();
    const recorded = await call('POST', '/v1/events/by-contact-id', token, {
      contactId: contact.id,
      eventName: 'CLI Export Test',
      dedupKey: `cli-${Date.now()}`,
      occurredAt: new Date().toISOString(),
    });
    expect(recorded.status).toBe(202);

    const found = await runCli([
      'contacts',
      'find',
      '--tenant',
      tenantId,
      '--identity',
      email.toUpperCase(),
      '--get',
      'contacts.0.id',
    ]);
    expect(found).toEqual({ code: 0, stdout: `${contact.id}\n`, stderr: '' });

    const exported = await runCli([
      'contacts',
      'export',
      '--tenant',
      tenantId,
      '--contact',
      contact.id,
    ]);
    expect(exported.code).toBe(0);
    const lines = exported.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string });
    expect(lines.map((l) => l.type)).toEqual(['contact', 'event']);

    const erased = await runCli([
      'contacts',
      'erase',
      '--tenant',
      tenantId,
      '--contact',
      contact.id,
    ]);
    expect(erased).toEqual({ code: 0, stdout: '', stderr: '' });
    const after = await runCli([
      'contacts',
      'find',
      '--tenant',
      tenantId,
      '--identity',
      contact.id,
      '--json',
    ]);
    expect(after).toEqual({ code: 0, stdout: '{"contacts":[]}\n', stderr: '' });
  });

  it('when events live follows a tenant through the ingress, then an Event recorded through the public API is printed within 2 s, and Ctrl-C ends it with exit code 0', async () => {
    const tenantId = await newTenant('CLI e2e live');
    const token = await accessToken(tenantId, ['contacts:write', 'events:write']);
    const put = await call('PUT', '/v1/contacts/cli-live', token, {
      email: `live-${Date.now()}@example.com`,
    });
    const contact = await put.json<{ id: string }>();

    const child = spawn(process.execPath, [cliPath, 'events', 'live', '--tenant', tenantId], {
      env: { ...process.env, NODE_OPTIONS: '', HERALD_URL: INGRESS, ADMIN_TOKEN: adminToken() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      // the view starts at its request: let it open before recording
      await new Promise((r) => setTimeout(r, 700));
      const sentAt = Date.now();
      const recorded = await call('POST', '/v1/events/by-contact-id', token, {
        contactId: contact.id,
        eventName: 'CLI Live Test',
        occurredAt: new Date().toISOString(),
        dedupKey: `live-${Date.now()}`,
        properties: { plan: 'team' },
      });
      expect(recorded.status).toBe(202);
      while (!stdout.includes('\n') && Date.now() - sentAt < 5_000) {
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(Date.now() - sentAt).toBeLessThan(2_000);
      expect(JSON.parse(stdout.split('\n')[0]!)).toMatchObject({
        eventName: 'CLI Live Test',
        contactId: contact.id,
        properties: '{"plan":"team"}',
      });
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  });

  it('when the admin token is wrong, then the exit code is 1 and stderr says unauthenticated', async () => {
    const result = await runCli(['tenants', 'create', '--name', 'Nope'], {
      ADMIN_TOKEN: 'not-the-admin-token',
    });

    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^error: unauthenticated: .+ \(HTTP 401\)\n$/);
  });

  it('when a tenant is unknown, then the exit code is 1 and stderr says not_found', async () => {
    const result = await runCli([
      'keys',
      'create',
      '--tenant',
      '00000000-0000-4000-8000-000000000000',
    ]);

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: not_found: .+ \(HTTP 404\)\n$/);
  });
});
