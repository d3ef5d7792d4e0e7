// The script `helm test` runs (charts/herald/files/helm-test.mjs, which the chart's test pod
// holds word for word), run with Node against the local stack through the ingress, as the pod
// runs it against a release's Services: it goes through the public path once and takes back all
// it made, the Contact erased, the key revoked and its own Tenant deleted, also when a step in
// the middle fails.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createPool, type Pool } from '@herald/db';
import { freeLoopbackPort, testDatabaseUrl } from '@herald/testing';
import { INGRESS, admin, adminToken, repoRoot } from './support.js';

const SCRIPT = path.join(repoRoot, 'charts', 'herald', 'files', 'helm-test.mjs');

interface ScriptRun {
  code: number | null;
  output: string;
}

function runScript(urls: { auth?: string; contacts?: string; events?: string } = {}) {
  const base = INGRESS.replace(/\/+$/, '');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    AUTH_URL: urls.auth ?? base,
    CONTACTS_URL: urls.contacts ?? base,
    EVENTS_URL: urls.events ?? base,
    ADMIN_TOKEN: adminToken(),
  };
  return new Promise<ScriptRun>((resolve) => {
    execFile(process.execPath, [SCRIPT], { env, timeout: 90_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      resolve({ code, output: stdout + stderr });
    });
  });
}

const tenantOf = (run: ScriptRun) => /^Tenant ([0-9a-f-]{36})$/m.exec(run.output)?.[1] ?? '';

let contacts: Pool;

beforeAll(() => {
  contacts = createPool({
    connectionString: testDatabaseUrl('herald_contacts'),
    max: 1,
    applicationName: 'herald-e2e-helm-test',
  });
});

afterAll(async () => {
  await contacts.end();
});

/** The Tenant's Contacts left in the contacts service's database. */
async function contactsLeft(tenantId: string): Promise<number> {
  const { rows } = await contacts.query<{ n: number }>(
    'select count(*)::int as n from contacts where tenant_id = $1',
    [tenantId],
  );
  return rows[0]!.n;
}

describe('the helm test script', () => {
  it('when every service answers, then it records one marked Event and leaves its Contact erased, its key revoked and its Tenant deleted', async () => {
    const run = await runScript();
    expect(run).toMatchObject({ code: 0 });
    expect(run.output).toContain('ok: token exchanged, Contact upserted, Event recorded');
    expect(run.output).toContain('POST /v1/contacts/by-id/:id/erase: 204');
    expect(run.output).toMatch(/POST \/admin\/v1\/tenants\/:id\/api-keys\/\S+\/revoke: 204/);
    expect(run.output).toContain('DELETE /admin/v1/tenants/:id: 202');
    const tenantId = tenantOf(run);
    expect(await contactsLeft(tenantId)).toBe(0);
    // A Tenant being deleted is gone from every other operator route at once.
    const res = await admin('GET', `/tenants/${tenantId}/event-retention`);
    expect(res.status).toBe(404);
  }, 120_000);

  it('when recording fails, then it still erases the Contact, revokes the key, deletes the Tenant and fails', async () => {
    const nobody = `http://127.0.0.1:${await freeLoopbackPort()}`;
    const run = await runScript({ events: nobody });
    expect(run.code).toBe(1);
    expect(run.output).not.toContain('ok: token exchanged');
    expect(run.output).toContain('POST /v1/contacts/by-id/:id/erase: 204');
    expect(run.output).toMatch(/revoke: 204/);
    expect(run.output).toContain('DELETE /admin/v1/tenants/:id: 202');
    expect(await contactsLeft(tenantOf(run))).toBe(0);
  }, 120_000);
});
