import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { DatabaseConnection } from './connection.js';
import { createPool, type Pool } from './pool.js';

// One arbitrary constant: replicas starting together take turns instead of racing.
const MIGRATION_LOCK_ID = 7_210_331;

export class MigrationError extends Error {
  override name = 'MigrationError';
}

interface Logger {
  info(obj: object, msg?: string): void;
}

/**
 * Applies the `NNN_name.sql` files of `directory` in name order, each in its own transaction,
 * recording them in `schema_migrations`. Safe to run from several replicas at once. A file
 * that changed after it was applied is an error: migrations are append-only.
 */
export async function runMigrations(
  pool: Pool,
  directory: string,
  logger?: Logger,
): Promise<string[]> {
  const files = (await readdir(directory)).filter((f) => f.endsWith('.sql')).sort();
  const client = await pool.connect();
  const applied: string[] = [];
  let broken: Error | undefined;
  try {
    // A migration may run long, and a replica may wait long for the lock: no pool timeout here.
    await client.query('set statement_timeout = 0');
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    await client.query(`create table if not exists schema_migrations (
      name text primary key,
      checksum text not null,
      applied_at timestamptz not null default now()
    )`);
    const { rows } = await client.query<{ name: string; checksum: string }>(
      'select name, checksum from schema_migrations',
    );
    const done = new Map(rows.map((r) => [r.name, r.checksum]));
    for (const file of files) {
      const sql = await readFile(path.join(directory, file), 'utf8');
      const checksum = createHash('sha256').update(sql).digest('hex');
      const previous = done.get(file);
      if (previous !== undefined) {
        if (previous !== checksum) {
          throw new MigrationError(
            `migration ${file} changed after it was applied; add a new one instead`,
          );
        }
        continue;
      }
      try {
        await client.query('begin');
        await client.query(sql);
        await client.query('insert into schema_migrations (name, checksum) values ($1, $2)', [
          file,
          checksum,
        ]);
        await client.query('commit');
      } catch (err) {
        await client.query('rollback');
        throw new MigrationError(`migration ${file} failed: ${(err as Error).message}`, {
          cause: err,
        });
      }
      applied.push(file);
      logger?.info({ migration: file }, 'migration applied');
    }
  } finally {
    if (!broken) {
      await client.query('reset statement_timeout').catch((err: Error) => (broken = err));
      await client
        .query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_ID])
        .catch((err: Error) => (broken = err));
    }
    // A connection that failed is destroyed rather than handed to the next caller.
    client.release(broken);
  }
  return applied;
}

/**
 * The whole migration step of a service's setup command (a Job in Kubernetes): connect (with
 * the connection of databaseConnection), apply `directory`, log, disconnect.
 */
export async function migrateDatabase(
  options: DatabaseConnection & {
    directory: string;
    applicationName: string;
    logger: Logger;
  },
): Promise<string[]> {
  const pool = createPool({
    connectionString: options.connectionString,
    ssl: options.ssl,
    applicationName: options.applicationName,
  });
  try {
    const applied = await runMigrations(pool, options.directory, options.logger);
    options.logger.info({ applied: applied.length }, 'migrations up to date');
    return applied;
  } finally {
    await pool.end();
  }
}
