// How a process reaches PostgreSQL: its URL, and TLS as managed offerings require it.
import type { ConnectionOptions } from 'node:tls';
import { caFile, ConfigError, readCaFile, url, z } from '@herald/config';

/**
 * libpq's names. `require` is read as `verify-full`, as node-postgres 8 reads it: Herald never
 * talks to a server it has not verified. `prefer` and `allow` (plain when TLS fails) are refused.
 */
export const DATABASE_SSL_MODES = ['disable', 'require', 'verify-ca', 'verify-full'] as const;
export type DatabaseSslMode = (typeof DATABASE_SSL_MODES)[number];

/**
 * The variables of a process that uses PostgreSQL, with its database's local URL as the default
 * (plain, as the local stack serves it).
 */
export const databaseEnv = (defaultUrl: string) => ({
  DATABASE_URL: url(defaultUrl).describe("the process's own database"),
  DATABASE_SSL_MODE: z
    .enum(DATABASE_SSL_MODES)
    .optional()
    .describe(
      "TLS to PostgreSQL: `disable`, `require` (read as `verify-full`), `verify-ca` or `verify-full`, libpq's meaning; unset: the URL's `sslmode`, else plain",
    ),
  DATABASE_CA_FILE: caFile().describe(
    "the CA bundle (PEM) the server's certificate must chain to; unset: the URL's `sslrootcert`, else Node's trusted CAs",
  ),
});

export interface DatabaseConfig {
  DATABASE_URL: string;
  DATABASE_SSL_MODE?: DatabaseSslMode | undefined;
  DATABASE_CA_FILE?: string | undefined;
}

/** What createPool and migrateDatabase take: the URL and its TLS settings. */
export interface DatabaseConnection {
  /** The URL without its `sslmode` and `sslrootcert`, which `ssl` carries. */
  connectionString: string;
  /** false: plain. */
  ssl: false | ConnectionOptions;
}

// node-postgres reads these from a URL too, and what it makes of them would replace `ssl`.
const UNSUPPORTED_URL_PARAMETERS = ['ssl', 'sslcert', 'sslkey', 'sslnegotiation', 'uselibpqcompat'];

/**
 * The connection of a process from its variables. TLS comes from DATABASE_SSL_MODE and
 * DATABASE_CA_FILE, or from the URL's `sslmode` and `sslrootcert` (libpq's parameters; `system`
 * names Node's trusted CAs); set both ways, they must agree. Throws a ConfigError naming the
 * variables, never quoting the URL (it holds the password).
 */
export function databaseConnection(config: DatabaseConfig): DatabaseConnection {
  const problems: string[] = [];
  let parsed: URL;
  try {
    parsed = new URL(config.DATABASE_URL);
  } catch {
    // Node's own error would carry the URL, password included.
    throw new ConfigError(['DATABASE_URL: not a URL']);
  }
  const parameters = parsed.searchParams;
  for (const name of UNSUPPORTED_URL_PARAMETERS) {
    if (parameters.has(name)) {
      problems.push(
        `DATABASE_URL: its ${name} parameter is not supported; set TLS with DATABASE_SSL_MODE and DATABASE_CA_FILE (client certificates are not supported)`,
      );
    }
  }

  const urlMode = parameters.get('sslmode') ?? undefined;
  if (urlMode !== undefined && !(DATABASE_SSL_MODES as readonly string[]).includes(urlMode)) {
    problems.push(
      `DATABASE_URL: sslmode=${urlMode} is not supported; use verify-full (or verify-ca, or disable)`,
    );
  }
  if (config.DATABASE_SSL_MODE && urlMode !== undefined && config.DATABASE_SSL_MODE !== urlMode) {
    problems.push(
      `DATABASE_SSL_MODE (${config.DATABASE_SSL_MODE}) and the sslmode of DATABASE_URL (${urlMode}) differ; set one of them`,
    );
  }
  const mode = config.DATABASE_SSL_MODE ?? (urlMode as DatabaseSslMode | undefined) ?? 'disable';

  const urlCa = parameters.get('sslrootcert') ?? undefined;
  if (config.DATABASE_CA_FILE && urlCa !== undefined && config.DATABASE_CA_FILE !== urlCa) {
    problems.push('DATABASE_CA_FILE and the sslrootcert of DATABASE_URL differ; set one of them');
  }
  const caPath = config.DATABASE_CA_FILE ?? (urlCa === 'system' ? undefined : urlCa);
  let ca: string | undefined;
  if (caPath !== undefined) {
    try {
      ca = readCaFile(caPath);
    } catch (err) {
      const variable = config.DATABASE_CA_FILE
        ? 'DATABASE_CA_FILE'
        : 'the sslrootcert of DATABASE_URL';
      problems.push(`${variable}: ${(err as Error).message}`);
    }
  }
  if (mode === 'disable' && caPath !== undefined) {
    problems.push(
      'DATABASE_CA_FILE (or sslrootcert) is set but TLS is off: set DATABASE_SSL_MODE=verify-full',
    );
  }
  if (mode === 'verify-ca' && caPath === undefined) {
    problems.push(
      "DATABASE_SSL_MODE=verify-ca needs DATABASE_CA_FILE: it does not check the server's name, so any certificate of a public CA would pass; or use verify-full",
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);

  let connectionString = config.DATABASE_URL;
  if (urlMode !== undefined || urlCa !== undefined) {
    parameters.delete('sslmode');
    parameters.delete('sslrootcert');
    connectionString = parsed.toString();
  }
  if (mode === 'disable') return { connectionString, ssl: false };
  const ssl: ConnectionOptions = { rejectUnauthorized: true, ...(ca ? { ca } : {}) };
  // node-postgres names the host for SNI and Node checks it against the certificate; verify-ca
  // checks the chain only, for a server reached by an address its certificate does not name.
  if (mode === 'verify-ca') ssl.checkServerIdentity = () => undefined;
  return { connectionString, ssl };
}
