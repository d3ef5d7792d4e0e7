// Fuzzes the API through the ingress of the running local stack with Schemathesis, from the
// OpenAPI document it serves: schema-valid requests must be accepted, invalid ones refused with
// a 4xx, and every answer must be one the document lists, with its schema. Schemathesis (PyPI)
// is installed once into a virtualenv under .herald/tools/. Exits 1 on any failure.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { commandLine, positiveInteger } from '@herald/stack/args.mjs';
import { dataDir, ingressUrl, repoRoot } from '@herald/stack/config.mjs';
import { ensureSystemPackages } from '@herald/stack/system-packages.mjs';

const USAGE = `Usage: npm run fuzz -- [--seconds N] [--phases LIST]

Runs Schemathesis against the local stack (start it with npm start) with a fresh Tenant and key:
every public and operator operation, positive and negative cases, and the stateful sequences the
document's links describe (upsert, read, export, erase).
  --seconds N     time budget of the run (default 120)
  --phases LIST   Schemathesis phases, comma-separated (default examples,coverage,fuzzing,stateful)
  -h, --help      this text`;

const SCHEMATHESIS_VERSION = '4.32.5';

const { values } = commandLine(USAGE, {
  options: { seconds: { type: 'string' }, phases: { type: 'string' } },
  check: ({ values: v }) => v.seconds !== undefined && positiveInteger('seconds', v.seconds),
});
const seconds = values.seconds === undefined ? 120 : Number(values.seconds);
const phases = values.phases ?? 'examples,coverage,fuzzing,stateful';

/** Debian splits `venv` and `ensurepip` into python3-venv: installed like the stack's servers. */
const { python } = await ensureSystemPackages({
  requirements: {
    python: {
      find: () =>
        spawnSync('python3', ['-c', 'import ensurepip, venv']).status === 0 ? 'python3' : null,
      apt: 'python3-venv',
    },
  },
});

/** The virtualenv's `st`, made (or upgraded to the pinned version) when needed. */
function schemathesis() {
  const venv = path.join(dataDir, 'tools', 'schemathesis');
  const st = path.join(venv, 'bin', 'st');
  const marker = path.join(venv, `.schemathesis-${SCHEMATHESIS_VERSION}`);
  if (fs.existsSync(marker)) return st;
  const step = (command, args) => {
    const r = spawnSync(command, args, { stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${r.status})`);
  };
  console.log(`fuzz: installing schemathesis ${SCHEMATHESIS_VERSION} into ${venv}`);
  step(python, ['-m', 'venv', venv]);
  step(path.join(venv, 'bin', 'pip'), [
    'install',
    '--quiet',
    '--disable-pip-version-check',
    `schemathesis==${SCHEMATHESIS_VERSION}`,
  ]);
  fs.writeFileSync(marker, '');
  return st;
}

/**
 * A request through the ingress; its JSON answer, or an error naming the status.
 * @param {string} method
 * @param {string} route
 * @param {{ token?: string, basic?: string, body?: object }} [options] `basic`: `id:secret`
 * @returns {Promise<unknown>}
 */
async function call(method, route, { token, basic, body } = {}) {
  const res = await fetch(`${ingressUrl}${route}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(basic ? { authorization: `Basic ${Buffer.from(basic).toString('base64')}` } : {}),
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${method} ${route} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/** A Tenant of its own, a secret key with every scope, and an access token for it. */
async function credentials() {
  const adminToken = fs.readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
  const tenant = /** @type {{ id: string }} */ (
    await call('POST', '/admin/v1/tenants', { token: adminToken, body: { name: 'fuzz' } })
  );
  const key = /** @type {{ clientId: string, secret: string }} */ (
    await call('POST', `/admin/v1/tenants/${tenant.id}/api-keys`, {
      token: adminToken,
      body: {
        name: 'fuzz',
        kind: 'secret',
        scopes: [
          'events:write',
          'contacts:write',
          'contacts:read',
          'contacts:export',
          'contacts:erase',
        ],
      },
    })
  );
  const { accessToken } = /** @type {{ accessToken: string }} */ (
    await call('POST', '/v1/token', { basic: `${key.clientId}:${key.secret}` })
  );
  return { adminToken, clientId: key.clientId, secret: key.secret, accessToken };
}

const st = schemathesis();
const creds = await credentials();
const reportDir = path.join(dataDir, 'fuzz');
fs.mkdirSync(reportDir, { recursive: true });
const run = spawnSync(
  st,
  [
    '--config-file',
    path.join(repoRoot, 'tests', 'fuzz', 'src', 'schemathesis.toml'),
    'run',
    `${ingressUrl}/v1/openapi.json`,
    '--url',
    ingressUrl,
    '--checks',
    'all',
    // A Contact is one person reached by several identities: an upsert by email answers the
    // Contact a PUT by externalId made earlier in the sequence, and erasing it by either identity
    // removes it for both. "Created, then not found" is then the erasure working.
    '--exclude-checks',
    'ensure_resource_availability',
    '--phases',
    phases,
    '--max-time',
    String(seconds),
    // One worker: two at once share the Tenant, and one's erasure of a Contact the other just
    // upserted (generated emails collide often) reads as a lost resource.
    '--workers',
    '1',
    '--report',
    'junit',
    '--report-dir',
    reportDir,
  ],
  {
    stdio: 'inherit',
    // Schemathesis keeps a cache in its working folder.
    cwd: reportDir,
    env: {
      ...process.env,
      HERALD_FUZZ_ACCESS_TOKEN: creds.accessToken,
      HERALD_FUZZ_ADMIN_TOKEN: creds.adminToken,
      HERALD_FUZZ_CLIENT_ID: creds.clientId,
      HERALD_FUZZ_SECRET: creds.secret,
    },
  },
);
process.exit(run.status ?? 1);
