import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { DatabaseConnection } from './connection.js';
import { createPool, type Pool, type PoolClient } from './pool.js';

// One arbitrary constant: replicas starting together take turns instead of racing.
const MIGRATION_LOCK_ID = 7_210_331;

export class MigrationError extends Error {
  override name = 'MigrationError';
}

interface Logger {
  info(obj: object, msg?: string): void;
  warn?(obj: object, msg?: string): void;
}

/** How the runner waits for the locks a migration needs on a live database. */
export interface MigrationOptions {
  /**
   * How long one statement of a migration may wait for a lock (PostgreSQL's `lock_timeout`).
   * A migration queued behind a long query would otherwise hold every later query of the table
   * in the queue behind it; given up, it is rolled back and tried again a little later.
   */
  lockTimeoutMs?: number;
  /** Tries of a migration that keeps meeting lock timeouts before the runner fails. */
  lockAttempts?: number;
  /** The pause before the second try; each further pause doubles, up to 10 s. */
  retryDelayMs?: number;
}

const DEFAULTS: Required<MigrationOptions> = {
  lockTimeoutMs: 2_000,
  lockAttempts: 10,
  retryDelayMs: 500,
};

/**
 * A file whose leading comment says `-- migrate: no-transaction` runs outside a transaction, for
 * the statements PostgreSQL refuses inside one (`create index concurrently`). It holds one
 * statement, has no lock_timeout (a concurrent build waits for older transactions; timed out it
 * would leave an invalid index), and must be safe to run again (`if not exists`): the runner
 * records it after it succeeded, so a crash between the two runs it a second time.
 */
const NO_TRANSACTION = /^(?:--[^\n]*\n|\s*\n)*--\s*migrate:\s*no-transaction\b/;

/**
 * A no-transaction file that also says `-- migrate: each partition of <table>` runs its statement
 * once per partition of that partitioned table, `{partition}` standing for the partition's name:
 * PostgreSQL builds no index concurrently on a partitioned table, only on each partition.
 */
const EACH_PARTITION = /^--\s*migrate:\s*each partition of ([a-z_][a-z0-9_]*)\s*$/m;
const PLAIN_NAME = /^[a-z_][a-z0-9_]*$/;

/** PostgreSQL's lock_not_available: a lock_timeout expired. */
const LOCK_NOT_AVAILABLE = '55P03';

const isLockTimeout = (err: unknown) =>
  (err as { code?: unknown } | null)?.code === LOCK_NOT_AVAILABLE;

/**
 * Applies the `NNN_name.sql` files of `directory` in name order, each in its own transaction
 * (unless it says `-- migrate: no-transaction`), recording them in `schema_migrations`. Safe to
 * run from several replicas at once, and on a database in use: a statement waits at most
 * `lockTimeoutMs` for a lock, then its migration is rolled back and tried again. A file that
 * changed after it was applied is an error: migrations are append-only.
 */
export async function runMigrations(
  pool: Pool,
  directory: string,
  logger?: Logger,
  options: MigrationOptions = {},
): Promise<string[]> {
  const settings = { ...DEFAULTS, ...options };
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
        await applyWithRetries(client, { file, sql, checksum }, settings, logger);
      } catch (err) {
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

interface Migration {
  file: string;
  sql: string;
  checksum: string;
}

/** One migration, tried again while it meets lock timeouts (each try all or nothing). */
async function applyWithRetries(
  client: PoolClient,
  migration: Migration,
  settings: Required<MigrationOptions>,
  logger: Logger | undefined,
): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await applyOnce(client, migration, settings.lockTimeoutMs);
      return;
    } catch (err) {
      if (!isLockTimeout(err) || attempt >= settings.lockAttempts) throw err;
      const delayMs = Math.min(settings.retryDelayMs * 2 ** (attempt - 1), 10_000);
      logger?.warn?.(
        { migration: migration.file, attempt, delayMs },
        'migration waited too long for a lock; rolled back, trying again',
      );
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

async function applyOnce(client: PoolClient, migration: Migration, lockTimeoutMs: number) {
  const record = () =>
    client.query('insert into schema_migrations (name, checksum) values ($1, $2)', [
      migration.file,
      migration.checksum,
    ]);
  if (NO_TRANSACTION.test(migration.sql)) {
    for (const statement of await statementsOf(client, migration)) await client.query(statement);
    await record();
    return;
  }
  try {
    await client.query('begin');
    await client.query(`set local lock_timeout = ${Math.max(0, Math.floor(lockTimeoutMs))}`);
    await client.query(migration.sql);
    await record();
    await client.query('commit');
  } catch (err) {
    await client.query('rollback');
    throw err;
  }
}

/** The statements of a no-transaction file: itself, or itself once per partition. */
async function statementsOf(client: PoolClient, migration: Migration): Promise<string[]> {
  const table = EACH_PARTITION.exec(migration.sql)?.[1];
  if (table === undefined) return [migration.sql];
  const { rows } = await client.query<{ name: string }>(
    `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
     where i.inhparent = $1::regclass order by 1`,
    [table],
  );
  return rows.map(({ name }) => {
    if (!PLAIN_NAME.test(name)) {
      throw new MigrationError(
        `${migration.file}: partition name ${JSON.stringify(name)} is not plain`,
      );
    }
    return migration.sql.replaceAll('{partition}', name);
  });
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
    migration?: MigrationOptions;
  },
): Promise<string[]> {
  const pool = createPool({
    connectionString: options.connectionString,
    ssl: options.ssl,
    applicationName: options.applicationName,
  });
  try {
    const applied = await runMigrations(pool, options.directory, options.logger, options.migration);
    options.logger.info({ applied: applied.length }, 'migrations up to date');
    return applied;
  } finally {
    await pool.end();
  }
}
