import { createPool, runMigrations } from '@herald/db';

/** The local PostgreSQL server (no database in the URL). */
export const TEST_POSTGRES_URL =
  process.env.HERALD_POSTGRES_URL ?? 'postgres://herald@127.0.0.1:55432';

/** The URL of a database on the local PostgreSQL server. */
export function testDatabaseUrl(database: string, serverUrl = TEST_POSTGRES_URL): string {
  return `${serverUrl}/${database}`;
}

interface TestDatabaseSettings {
  /** The disposable database's name. */
  database: string;
  /**
   * The advisory lock that serializes test workers while they create or reset a database (any
   * constant will do; files that share a database must share it).
   */
  lockId?: number;
  /** The server, without a database; default TEST_POSTGRES_URL. */
  serverUrl?: string;
  /** Prefix of the connections' application_name; default `herald-test`. */
  applicationName?: string;
}

export type PrepareTestDatabaseOptions = TestDatabaseSettings &
  (
    | {
        /** The folder of `NNN_name.sql` migrations to apply. */
        migrationsDir: string;
      }
    | {
        /**
         * Migrates the database another way, e.g. with a service's own migration command. It
         * throws when a migration fails; a message saying the migration "changed after it was
         * applied" has the database built again, as one from runMigrations does.
         */
        migrate(databaseUrl: string): Promise<void>;
      }
  );

const DEFAULT_LOCK_ID = 7_210_300;

const changedAfterApplied = (err: unknown) =>
  err instanceof Error && /changed after it was applied/.test(err.message);

/**
 * Creates the test database when missing and migrates it. The database is disposable: when a
 * migration changed after it was applied (migrations are still being written), it is dropped
 * and built again.
 */
export async function prepareTestDatabase(options: PrepareTestDatabaseOptions): Promise<void> {
  const { database } = options;
  const serverUrl = options.serverUrl ?? TEST_POSTGRES_URL;
  const lockId = options.lockId ?? DEFAULT_LOCK_ID;
  const applicationName = options.applicationName ?? 'herald-test';
  const databaseUrl = testDatabaseUrl(database, serverUrl);
  const migrate =
    'migrate' in options
      ? () => options.migrate(databaseUrl)
      : async () => {
          const pool = createPool({
            connectionString: databaseUrl,
            applicationName: `${applicationName}-migrate`,
            max: 1,
          });
          try {
            await runMigrations(pool, options.migrationsDir);
          } finally {
            await pool.end();
          }
        };

  const admin = createPool({
    connectionString: testDatabaseUrl('postgres', serverUrl),
    applicationName: `${applicationName}-setup`,
    max: 1,
  });
  const client = await admin.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [lockId]);
    const exists = async () =>
      (await client.query('select 1 from pg_database where datname = $1', [database])).rowCount ===
      1;
    if (!(await exists())) await client.query(`create database "${database}"`);
    try {
      await migrate();
    } catch (err) {
      if (!changedAfterApplied(err)) throw err;
      await client.query(`drop database "${database}" with (force)`);
      await client.query(`create database "${database}"`);
      await migrate();
    }
  } finally {
    await client.query('select pg_advisory_unlock($1)', [lockId]).catch(() => {});
    client.release();
    await admin.end();
  }
}
