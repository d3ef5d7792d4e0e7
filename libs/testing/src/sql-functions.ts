import { readFile } from 'node:fs/promises';
import { createPool } from '@herald/db';
import { TEST_POSTGRES_URL } from './database.js';

const APP = 'herald-test-sql-functions';

/** One function of a database's public schema, as PostgreSQL prints it. */
export interface SqlFunction {
  name: string;
  args: string;
  definition: string;
}

/** Every function of the database's public schema, by name and arguments. */
export async function sqlFunctionsOf(
  database: string,
  serverUrl = TEST_POSTGRES_URL,
): Promise<SqlFunction[]> {
  const pool = createPool({
    connectionString: `${serverUrl}/${database}`,
    applicationName: APP,
    max: 1,
  });
  try {
    const { rows } = await pool.query<SqlFunction>(
      `select p.proname as name, pg_get_function_identity_arguments(p.oid) as args,
              pg_get_functiondef(p.oid) as definition
         from pg_proc p join pg_namespace n on n.oid = p.pronamespace
        where n.nspname = 'public'
        order by 1, 2`,
    );
    return rows;
  } finally {
    await pool.end();
  }
}

/**
 * The functions a file of definitions makes, run alone in a new database `database` (dropped
 * first if it exists). To compare with `sqlFunctionsOf` a migrated database.
 */
export async function sqlFunctionsOfFile(
  database: string,
  file: URL,
  serverUrl = TEST_POSTGRES_URL,
): Promise<SqlFunction[]> {
  const admin = createPool({
    connectionString: `${serverUrl}/postgres`,
    applicationName: APP,
    max: 1,
  });
  try {
    await admin.query(`drop database if exists "${database}" with (force)`);
    await admin.query(`create database "${database}"`);
  } finally {
    await admin.end();
  }
  const pool = createPool({
    connectionString: `${serverUrl}/${database}`,
    applicationName: APP,
    max: 1,
  });
  const client = await pool.connect();
  try {
    // Without the tables: bodies (and their %rowtype declarations) are checked when they run.
    await client.query('set check_function_bodies = off');
    await client.query(await readFile(file, 'utf8'));
  } finally {
    client.release();
    await pool.end();
  }
  return sqlFunctionsOf(database, serverUrl);
}
