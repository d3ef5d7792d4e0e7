import type { Pool } from '@herald/db';

export interface OutboxVacuumOptions {
  pool: Pool;
  logger: { warn(obj: object, msg?: string): void };
  /** The outbox's name, in the log lines. */
  name: string;
  /** A vacuum starts once this many rows were deleted since the last one started; 0: never. */
  afterRows: number;
}

export interface OutboxVacuum {
  /** Counts rows the relay deleted (committed); starts a vacuum in the background when due. */
  deleted(rows: number): void;
  /** Resolves once no vacuum is under way. */
  idle(): Promise<void>;
}

// The relay's user may vacuum a table it owns, or any table of a database it owns; a user that
// only reads and writes cannot (VACUUM then warns and does nothing) and leaves it to autovacuum.
const MAY_VACUUM_SQL = `select pg_has_role(c.relowner, 'USAGE')
         or pg_has_role((select datdba from pg_database where datname = current_database()), 'USAGE')
         as may
  from pg_class c where c.oid = 'outbox'::regclass`;

// SKIP_LOCKED: when autovacuum or another replica's relay vacuums it already, there is nothing
// to add. TRUNCATE false: the outbox is empty between bursts, so nearly every vacuum would cut
// the file back and take an ACCESS EXCLUSIVE lock that makes recording's inserts wait for it;
// the space is reused by the next rows instead (autovacuum still truncates after a backlog).
const VACUUM_SQL = 'vacuum (skip_locked, truncate false) outbox';

/**
 * Keeps the outbox small under sustained load. Every published row is deleted, so the table's
 * dead rows grow as fast as Events arrive, and autovacuum comes by at most once a minute (its
 * naptime) per database: the table and its indexes would grow to hold a minute of messages, or
 * more while a vacuum runs throttled. Vacuuming after every `afterRows` deleted rows bounds that
 * to `afterRows` rows whatever the rate. One vacuum at a time; a failure is logged, never thrown.
 */
export function createOutboxVacuum(options: OutboxVacuumOptions): OutboxVacuum {
  const { pool, logger, name, afterRows } = options;
  let sinceLast = 0;
  let running: Promise<void> | undefined;
  /** Unknown until the first vacuum is due; false turns vacuuming off for good. */
  let allowed: boolean | undefined;

  async function vacuum(): Promise<void> {
    if (allowed === undefined) {
      const { rows } = await pool.query<{ may: boolean }>(MAY_VACUUM_SQL);
      allowed = rows[0]?.may === true;
      if (!allowed) {
        logger.warn(
          { outbox: name },
          'the relay may not vacuum the outbox (its database user owns neither the table nor the database): autovacuum alone cleans it',
        );
        return;
      }
    }
    await vacuumWithoutTimeout(pool, VACUUM_SQL);
  }

  return {
    deleted(rows) {
      if (afterRows <= 0 || allowed === false) return;
      sinceLast += rows;
      if (sinceLast < afterRows || running) return;
      sinceLast = 0;
      running = vacuum()
        .catch((err: unknown) => {
          logger.warn({ outbox: name, err }, 'could not vacuum the outbox; autovacuum will');
        })
        .finally(() => {
          running = undefined;
        });
    },
    async idle() {
      await running;
    },
  };
}

/**
 * Runs a VACUUM on a connection of its own without the pool's statement timeout (meant for
 * requests): one over a table a backlog left large may take longer, and cancelling it would only
 * leave the same work to autovacuum. The connection gets the timeout back before it returns.
 */
async function vacuumWithoutTimeout(pool: Pool, sql: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('set statement_timeout = 0');
    await client.query(sql);
  } finally {
    await client.query('reset statement_timeout').then(
      () => client.release(),
      (err: unknown) => client.release(err instanceof Error ? err : new Error(String(err))),
    );
  }
}
