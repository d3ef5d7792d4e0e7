// `node --test tools/stack/src/secrets.test.mjs`: the admin token file of the local stack. The CLI,
// the load tests and the benchmarks in another shell read .herald/admin-token, so it must hold
// the token the running services accept, also when `npm start` took it from ADMIN_TOKEN.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

// config.mjs reads HERALD_DATA_DIR once, on import: point it at a scratch folder first.
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-secrets-'));
process.env.HERALD_DATA_DIR = dataDir;
delete process.env.ADMIN_TOKEN;
const { adminToken, adminTokenFile, ensureSecrets, serviceCallers, serviceToken, stackSecrets } =
  await import('./secrets.mjs');
const { createHash } = await import('node:crypto');
after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

const fileToken = () => fs.readFileSync(adminTokenFile, 'utf8').trim();

test('when no token is given, then one is generated once and kept (mode 0600)', () => {
  ensureSecrets();
  const first = fileToken();
  assert.match(first, /^[A-Za-z0-9_-]{43}$/);
  ensureSecrets();
  assert.equal(fileToken(), first);
  assert.equal(adminToken(), first);
  assert.equal(fs.statSync(adminTokenFile).mode & 0o777, 0o600);
});

test('when the stack starts with ADMIN_TOKEN, then the file holds that token', () => {
  ensureSecrets();
  const fromEnv = 'an-operator-chosen-admin-token-0123456789';
  ensureSecrets({ adminToken: fromEnv });
  assert.equal(fileToken(), fromEnv);
  assert.equal(fs.statSync(adminTokenFile).mode & 0o777, 0o600);
  // A later start without ADMIN_TOKEN keeps it: the running services still accept it.
  ensureSecrets();
  assert.equal(fileToken(), fromEnv);
  assert.equal(adminToken(), fromEnv);
});

test('each calling process gets its own service token, made once, unlike the admin token', () => {
  const contacts = serviceToken('contacts');
  const events = serviceToken('events');
  assert.match(contacts, /^[A-Za-z0-9_-]{43}$/);
  assert.notEqual(contacts, events);
  assert.notEqual(contacts, adminToken());
  assert.equal(serviceToken('contacts'), contacts);
  const file = path.join(dataDir, 'service-tokens', 'contacts');
  assert.equal(fs.readFileSync(file, 'utf8').trim(), contacts);
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  assert.throws(() => serviceToken('../admin-token'), /not a process name/);
});

test("a service's SERVICE_CALLERS lists the sha256 of exactly its callers' tokens", () => {
  const sha256 = (text) => createHash('sha256').update(text).digest('hex');
  const expected = `contacts:sha256:${sha256(serviceToken('contacts'))},billing:sha256:${sha256(serviceToken('billing'))}`;
  assert.equal(serviceCallers(['contacts', 'billing']), expected);
  assert.equal(
    stackSecrets.SERVICE_CALLERS({ name: 'auth', callers: ['contacts', 'billing'] }),
    expected,
  );
  assert.equal(stackSecrets.SERVICE_TOKEN({ name: 'events' }), serviceToken('events'));
  assert.ok(!serviceCallers(['contacts']).includes(serviceToken('contacts')));
});
