// Secrets of the local stack, generated once and kept in the data folder (mode 0600).
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { dataDir } from './config.mjs';
import { ensureDir, readText, writeIfChanged } from './files.mjs';

export const adminTokenFile = path.join(dataDir, 'admin-token');
export const signingKeysFile = path.join(dataDir, 'signing-keys.json');
export const serviceTokenFile = path.join(dataDir, 'service-token');

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
 */
export function ensureSecrets({ adminToken: startingWith } = {}) {
  if (startingWith) {
    ensureDir(path.dirname(adminTokenFile));
    writeIfChanged(adminTokenFile, `${startingWith}\n`, 0o600);
  }
  for (const file of [adminTokenFile, serviceTokenFile]) {
    if (!readText(file)?.trim()) {
      fs.rmSync(file, { force: true });
      writeSecret(file, `${randomBytes(32).toString('base64url')}\n`);
    }
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

/** The token Herald's services present to each other's internal routes. */
export function serviceToken() {
  ensureSecrets();
  return readText(serviceTokenFile).trim();
}

/** The secrets a registry entry may list in `secrets`, by variable name. */
export const stackSecrets = Object.freeze({
  ADMIN_TOKEN: adminToken,
  AUTH_SIGNING_KEYS: signingKeys,
  SERVICE_TOKEN: serviceToken,
});
