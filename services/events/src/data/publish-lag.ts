import type { Pool } from '@herald/db';

/**
 * How long the oldest message still in the outbox has waited (ms), 0 when none waits: the relay's
 * publish lag right now. The outbox's first row by id, so one index probe.
 */
export async function oldestPendingMs(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ waited: number }>(
    `select coalesce((select extract(epoch from clock_timestamp() - created_at) * 1000
                      from outbox order by id limit 1), 0)::float8 as waited`,
  );
  return Math.max(0, rows[0]?.waited ?? 0);
}
