import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
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

/**
 * A test timeout for one that searches every dump twice (before and after): tens of seconds on
 * a local stack grown by benchmarks.
 */
export const DUMP_SEARCH_TIMEOUT_MS = 120_000;

export interface DumpSearch {
  /** Every Herald database that was dumped. */
  databases: string[];
  /** The databases whose dump holds the value (case-insensitively); the value must be searched. */
  holding(value: string): string[];
}

/**
 * Dumps every Herald database (schema and data), or those of `only`, with pg_dump and searches
 * each dump for `values`, case-insensitively, as it streams: no dump is held whole, so a database
 * grown large by a benchmark or a soak is searched like a small one.
 */
export async function searchHeraldDatabaseDumps(
  values: readonly string[],
  serverUrl = TEST_POSTGRES_URL,
  only?: readonly string[],
): Promise<DumpSearch> {
  const pgDump = findPgDump();
  const needles = [...new Set(values.map((v) => v.toLowerCase()))];
  const found = new Map<string, Set<string>>(needles.map((n) => [n, new Set()]));
  const databases: string[] = [];
  const candidates = await heraldDatabases(serverUrl);
  for (const database of only ? candidates.filter((d) => only.includes(d)) : candidates) {
    try {
      const holds = await searchDump(pgDump, `${serverUrl}/${database}`, needles);
      for (const needle of holds) found.get(needle)!.add(database);
      databases.push(database);
    } catch (err) {
      // A disposable test database another test file dropped in the meantime holds nothing.
      if (!(await heraldDatabases(serverUrl)).includes(database)) continue;
      throw err;
    }
  }
  return {
    databases,
    holding(value) {
      const dbs = found.get(value.toLowerCase());
      if (!dbs) throw new Error(`${JSON.stringify(value)} was not among the values searched`);
      return [...dbs];
    },
  };
}

/** The needles (lower case) found in one database's dump, read a chunk at a time. */
function searchDump(pgDump: string, url: string, needles: readonly string[]): Promise<string[]> {
  // A value split across two chunks is found in the carried-over end of the previous one.
  const carry = Math.max(0, ...needles.map((n) => n.length)) - 1;
  return new Promise((resolve, reject) => {
    const child = spawn(pgDump, ['--no-password', '--dbname', url], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const holds = new Set<string>();
    let tail = '';
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const text = tail + chunk.toLowerCase();
      for (const needle of needles)
        if (!holds.has(needle) && text.includes(needle)) holds.add(needle);
      tail = carry > 0 ? text.slice(-carry) : '';
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve([...holds]);
      else reject(new Error(`pg_dump of ${url} exited ${code}: ${stderr.trim()}`));
    });
  });
}
