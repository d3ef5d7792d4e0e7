import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { createPool } from '@herald/db';
import { TEST_POSTGRES_URL } from './database.js';

/** `$HERALD_PG_BIN/pg_dump`, else the newest /usr/lib/postgresql/<version>/bin/pg_dump. */
export function findPgDump(): string {
  if (process.env.HERALD_PG_BIN) return path.join(process.env.HERALD_PG_BIN, 'pg_dump');
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(path.join(root, v, 'bin', 'pg_dump')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!versions[0]) throw new Error('pg_dump not found: set HERALD_PG_BIN to its folder');
  return path.join(root, versions[0], 'bin', 'pg_dump');
}

/** Every database named `herald_%` that accepts connections, by name. */
export async function heraldDatabases(serverUrl = TEST_POSTGRES_URL): Promise<string[]> {
  const pool = createPool({
    connectionString: `${serverUrl}/postgres`,
    applicationName: 'herald-test-dump',
    max: 1,
  });
  try {
    const { rows } = await pool.query<{ datname: string }>(
      `select datname from pg_database where datname like 'herald\\_%' and datallowconn
       order by datname`,
    );
    return rows.map((r) => r.datname);
  } finally {
    await pool.end();
  }
}

/** Every Herald database's full dump (schema and data), by name. */
export async function dumpAllHeraldDatabases(
  serverUrl = TEST_POSTGRES_URL,
): Promise<Map<string, string>> {
  const pgDump = findPgDump();
  const dumps = new Map<string, string>();
  for (const database of await heraldDatabases(serverUrl)) {
    try {
      const { stdout } = await promisify(execFile)(
        pgDump,
        ['--no-password', '--dbname', `${serverUrl}/${database}`],
        { maxBuffer: 1024 * 1024 * 1024, encoding: 'utf8' },
      );
      dumps.set(database, stdout);
    } catch (err) {
      // A disposable test database another test file dropped in the meantime holds nothing.
      if (!(await heraldDatabases(serverUrl)).includes(database)) continue;
      throw err;
    }
  }
  return dumps;
}
