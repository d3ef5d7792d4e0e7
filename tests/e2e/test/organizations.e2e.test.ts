// Organizations through the operator API at the ingress, and the operator CLI's
// `organizations create` against the running stack. The contacts service asks the auth service
// whether the tenant exists. Needs a built CLI (`npm run build`).
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { admin, cliPath, expectError, INGRESS, newTenant, runCli, runCommand } from './support.js';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const create = (tenantId: string, body: unknown, token?: string) =>
  admin('POST', `/tenants/${tenantId}/organizations`, body, token);

describe('organizations through the operator API', () => {
  it('when an organization is created, then 201 {externalId, name, createdAt}; again, then 409 conflict', async () => {
    const tenantId = await newTenant('Orgs E2E');

    const res = await create(tenantId, { externalId: 'org-42', name: 'Globex' });

    expect(res.status).toBe(201);
    expect(await res.json()).toStrictEqual({
      externalId: 'org-42',
      name: 'Globex',
      createdAt: expect.stringMatching(TIMESTAMP),
    });
    await expectError(await create(tenantId, { externalId: 'org-42' }), 409, 'conflict');
  });

  it('when the externalId is used in another tenant, then it is created here too', async () => {
    const a = await newTenant('Orgs E2E A');
    const b = await newTenant('Orgs E2E B');
    expect((await create(a, { externalId: 'shared-org' })).status).toBe(201);

    expect((await create(b, { externalId: 'shared-org' })).status).toBe(201);
  });

  it('when the tenant does not exist (asked of the auth service) or the id is not a uuid, then 404 not_found', async () => {
    await expectError(await create(randomUUID(), { externalId: 'org-1' }), 404, 'not_found');
    await expectError(await create('not-a-tenant', { externalId: 'org-1' }), 404, 'not_found');
  });

  it.each([
    ['an empty object', {}],
    ['an empty externalId', { externalId: '' }],
    ['an externalId of 256 characters', { externalId: 'o'.repeat(256) }],
    ['a numeric externalId', { externalId: 42 }],
    ['an empty name', { externalId: 'org-1', name: '' }],
    ['an array', [{ externalId: 'org-1' }]],
  ])('when the body is %s, then 400 validation_error', async (_, body) => {
    const tenantId = await newTenant('Orgs E2E bad body');

    await expectError(await create(tenantId, body), 400, 'validation_error');
  });

  it('when the admin token is missing or wrong, then 401 unauthenticated', async () => {
    const tenantId = await newTenant('Orgs E2E 401');

    await expectError(
      await create(tenantId, { externalId: 'org-1' }, 'wrong'),
      401,
      'unauthenticated',
    );
    const anonymous = await fetch(`${INGRESS}/admin/v1/tenants/${tenantId}/organizations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ externalId: 'org-1' }),
    });
    await expectError(anonymous, 401, 'unauthenticated');
    // Nothing was created: the first real create succeeds.
    expect((await create(tenantId, { externalId: 'org-1' })).status).toBe(201);
  });

  it('when the method is DELETE, then 405 method_not_allowed', async () => {
    const tenantId = await newTenant('Orgs E2E 405');

    await expectError(
      await admin('DELETE', `/tenants/${tenantId}/organizations`),
      405,
      'method_not_allowed',
    );
  });

  it('when listed through the ingress, then the organizations come by externalId', async () => {
    const tenantId = await newTenant('Orgs E2E list');
    for (const externalId of ['org-b', 'org-a']) {
      expect((await create(tenantId, { externalId })).status).toBe(201);
    }
    const res = await admin('GET', `/tenants/${tenantId}/organizations`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      organizations: [
        expect.objectContaining({ externalId: 'org-a' }),
        expect.objectContaining({ externalId: 'org-b' }),
      ],
      nextCursor: null,
    });
  });
});

describe('herald-admin organizations create against the running stack', () => {
  beforeAll(() => {
    if (!existsSync(cliPath)) {
      throw new Error(`${cliPath} is missing: build the CLI first (npm run build)`);
    }
  });

  it('when an organization is created with the CLI, then exit 0 and the created organization is printed; again, then exit 1 with conflict', async () => {
    const tenantId = await newTenant('Orgs CLI');

    const created = await runCli([
      'organizations',
      'create',
      '--tenant',
      tenantId,
      '--external-id',
      'org-cli',
      '--name',
      'Initech',
      '--json',
    ]);

    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(created.stdout)).toStrictEqual({
      externalId: 'org-cli',
      name: 'Initech',
      createdAt: expect.stringMatching(TIMESTAMP),
    });

    const again = await runCli([
      'organizations',
      'create',
      '--tenant',
      tenantId,
      '--external-id',
      'org-cli',
    ]);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toMatch(/^error: conflict: .+ \(HTTP 409\)\n$/);
  });

  it('when the tenant is unknown, then exit 1 with not_found', async () => {
    const result = await runCli([
      'organizations',
      'create',
      '--tenant',
      randomUUID(),
      '--external-id',
      'org-1',
    ]);

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: not_found: .+ \(HTTP 404\)\n$/);
  });

  it('when run as the documented `npm run -s admin -- organizations create`, then it prints the externalId with --get', async () => {
    const tenantId = await newTenant('Orgs npm run');

    const result = await runCommand('npm', [
      'run',
      '-s',
      'admin',
      '--',
      'organizations',
      'create',
      '--tenant',
      tenantId,
      '--external-id',
      'org-npm',
      '--get',
      'externalId',
    ]);

    expect(result.code).toBe(0);
    expect(result.stdout).toBe('org-npm\n');
  });
});
