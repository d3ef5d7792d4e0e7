// Secrets of the local stack, generated once and kept in the data folder (mode 0600).
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { dataDir } from './config.mjs';
import { ensureDir, readText, writeIfChanged } from './files.mjs';

export const adminTokenFile = path.join(dataDir, 'admin-token');
export const signingKeysFile = path.join(dataDir, 'signing-keys.json');
/** Each calling process's own token for the internal routes: service-tokens/<process>. */
export const serviceTokensDir = path.join(dataDir, 'service-tokens');
export const serviceTokenFile = (processName) => path.join(serviceTokensDir, processName);

function writeSecret(file, content) {
  ensureDir(path.dirname(file));
  try {
    fs.writeFileSync(file, content, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if (err.code !== 'EEXIST') throw err; // another process made it first: keep theirs
  }
  fs.chmodSync(file, 0o600);
}

/**
 * Creates the tokens and the signing key set when missing. Synchronous and idempotent.
 * `adminToken`: the admin token the services are about to start with (ADMIN_TOKEN from the
 * environment). The file is made to hold it, because the CLI, the load tests and the benchmarks
 * in other shells read the file: it must hold the token the running stack accepts.
 * @param {{ adminToken?: string }} [options]
 */
export function ensureSecrets({ adminToken: startingWith } = {}) {
  if (startingWith) {
    ensureDir(path.dirname(adminTokenFile));
    writeIfChanged(adminTokenFile, `${startingWith}\n`, 0o600);
  }
  if (!readText(adminTokenFile)?.trim()) {
    fs.rmSync(adminTokenFile, { force: true });
    writeSecret(adminTokenFile, `${randomBytes(32).toString('base64url')}\n`);
  }
  if (!readText(signingKeysFile)?.trim()) {
    fs.rmSync(signingKeysFile, { force: true });
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = privateKey.export({ format: 'jwk' });
    const key = {
      kty: jwk.kty,
      crv: jwk.crv,
      x: jwk.x,
      y: jwk.y,
      d: jwk.d,
      kid: randomBytes(9).toString('base64url'),
      alg: 'ES256',
    };
    writeSecret(signingKeysFile, `${JSON.stringify([key])}\n`);
  }
}

/** ADMIN_TOKEN from the environment when set, else the generated one. */
export function adminToken() {
  if (process.env.ADMIN_TOKEN) return process.env.ADMIN_TOKEN;
  ensureSecrets();
  return readText(adminTokenFile).trim();
}

/** The JSON text of .herald/signing-keys.json (an array of private JWKs). */
export function signingKeys() {
  ensureSecrets();
  return readText(signingKeysFile).trim();
}

/**
 * A process's own token for the internal routes of the services it calls (its SERVICE_TOKEN),
 * made on first use: every calling process has its own, so none can call as another.
 */
export function serviceToken(processName) {
  if (!/^[a-z][a-z0-9-]*$/.test(processName ?? '')) {
    throw new Error(`not a process name: ${JSON.stringify(processName)}`);
  }
  const file = serviceTokenFile(processName);
  if (!readText(file)?.trim()) {
    fs.rmSync(file, { force: true });
    writeSecret(file, `${randomBytes(32).toString('base64url')}\n`);
  }
  return readText(file).trim();
}

/**
 * SERVICE_CALLERS of a process: `name:sha256:<hex>` for each process that may call its internal
 * routes (the registry's `callers`). Digests, not the tokens: a service can check its callers
 * without holding what would let it call the others as one of them.
 */
export function serviceCallers(callers) {
  return callers
    .map((name) => {
      const digest = createHash('sha256').update(serviceToken(name)).digest('hex');
      return `${name}:sha256:${digest}`;
    })
    .join(',');
}

/**
 * The secrets a registry entry may list in `secrets`, by variable name, each a function of the
 * entry (the process that gets it).
 */
export const stackSecrets = Object.freeze({
  ADMIN_TOKEN: () => adminToken(),
  AUTH_SIGNING_KEYS: () => signingKeys(),
  SERVICE_TOKEN: (service) => serviceToken(service.name),
  SERVICE_CALLERS: (service) => serviceCallers(service.callers ?? []),
});
