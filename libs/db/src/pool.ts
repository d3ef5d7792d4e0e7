import pg from 'pg';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

export interface PoolOptions {
  connectionString: string;
  /** Shown in pg_stat_activity, so an operator sees which service holds a connection. */
  applicationName: string;
  max?: number;
  /** A request waiting longer than this for a connection fails fast (503) instead of hanging. */
  connectionTimeoutMillis?: number;
  statementTimeoutMillis?: number;
}

export function createPool(options: PoolOptions): Pool {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    application_name: options.applicationName,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? 5_000,
    statement_timeout: options.statementTimeoutMillis ?? 10_000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its connection (database restart) must not crash the process;
  // the pool drops it and the next query reconnects.
  pool.on('error', () => {});
  return pool;
}

/** For /readyz. */
export async function pingDatabase(pool: Pool): Promise<void> {
  await pool.query('select 1');
}

/** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
export async function withTransaction<T>(
  pool: Pool,
  fn: (client: PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  // A connection whose rollback failed is destroyed rather than handed to the next caller.
  let broken: Error | undefined;
  try {
    await client.query('begin');
    const result = await fn(client);
    await client.query('commit');
    return result;
  } catch (err) {
    await client.query('rollback').catch((rollbackError: Error) => {
      broken = rollbackError;
    });
    throw err;
  } finally {
    client.release(broken);
  }
}

/** A unique constraint was violated (SQLSTATE 23505), optionally a named one. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string } | null;
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint);
}
