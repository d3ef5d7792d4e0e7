import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type Env = Readonly<Record<string, string | undefined>>;

/** The operation cannot go ahead or failed; the message is for the operator (exit code 1). */
export class CliError extends Error {
  override name = 'CliError';
}

export const DEFAULT_URL = 'http://localhost:8080';

/** This file sits in tools/cli/src (tests) or tools/cli/dist (built): three levels up. */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** Unset and empty count the same, as in the services' configuration. */
function setting(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** The ingress base URL from HERALD_URL, without a trailing slash. */
export function baseUrlOf(env: Env): string {
  const raw = setting(env, 'HERALD_URL') ?? DEFAULT_URL;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new CliError(`HERALD_URL is not a URL: "${raw}" (e.g. ${DEFAULT_URL})`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new CliError(`HERALD_URL must be an http or https URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

/** The local stack's admin token file: `<repo>/.herald/admin-token`, or under HERALD_DATA_DIR. */
export function adminTokenFile(env: Env, root = repoRoot): string {
  return path.join(path.resolve(root, setting(env, 'HERALD_DATA_DIR') ?? '.herald'), 'admin-token');
}

/** ADMIN_TOKEN, else the local stack's token file, else a clear error. */
export function adminTokenOf(env: Env, root = repoRoot): string {
  const fromEnv = setting(env, 'ADMIN_TOKEN');
  if (fromEnv !== undefined) return fromEnv;
  const file = adminTokenFile(env, root);
  let token: string;
  try {
    token = readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new CliError(`cannot read the admin token file ${file}: ${(error as Error).message}`);
    }
    token = '';
  }
  if (token === '') {
    throw new CliError(
      `no admin token: set ADMIN_TOKEN, or start the local stack (npm start), which writes ${file}`,
    );
  }
  return token;
}
