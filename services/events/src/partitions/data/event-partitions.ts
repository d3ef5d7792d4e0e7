import type { Pool, PoolClient } from '@herald/db';
import type { EventPartition } from '../partition-plan.js';

// One arbitrary constant: replicas running upkeep at once take turns, the second finding nothing
// to do, instead of racing to create the same partition.
const UPKEEP_LOCK_ID = 7_210_335;

/** Every partition of `events` but the default, oldest first. */
export async function listEventPartitions(db: Pool | PoolClient): Promise<EventPartition[]> {
  // pg_get_expr writes the bounds in the session's time zone, with its offset: they read back
  // as the same instants.
  const { rows } = await db.query<{ name: string; from: Date | null; to: Date }>(
    `select c.relname as name,
            (regexp_match(b.bound, 'FROM \\(''([^'']+)''\\)'))[1]::timestamptz as "from",
            (regexp_match(b.bound, 'TO \\(''([^'']+)''\\)'))[1]::timestamptz as "to"
     from pg_inherits i
     join pg_class c on c.oid = i.inhrelid
     cross join lateral (select pg_get_expr(c.relpartbound, c.oid) as bound) b
     where i.inhparent = 'events'::regclass and b.bound <> 'DEFAULT'
     order by 3`,
  );
  return rows;
}

/**
 * Runs `job` with the upkeep lock held, or answers undefined at once when another replica holds
 * it. A session lock on a connection of its own, released before the connection goes back.
 */
export async function withUpkeepLock<T>(
  pool: Pool,
  job: (client: PoolClient) => Promise<T>,
): Promise<T | undefined> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    const { rows } = await client.query<{ locked: boolean }>(
      'select pg_try_advisory_lock($1) as locked',
      [UPKEEP_LOCK_ID],
    );
    if (!rows[0]?.locked) return undefined;
    try {
      return await job(client);
    } finally {
      await client
        .query('select pg_advisory_unlock($1)', [UPKEEP_LOCK_ID])
        .catch((err: Error) => (broken = err));
    }
  } finally {
    client.release(broken);
  }
}

async function inTransaction<T>(
  client: PoolClient,
  lockTimeoutMs: number,
  work: () => Promise<T>,
): Promise<T> {
  await client.query('begin');
  try {
    await client.query(`set local lock_timeout = ${Math.max(1, Math.floor(lockTimeoutMs))}`);
    const result = await work();
    await client.query('commit');
    return result;
  } catch (err) {
    await client.query('rollback');
    throw err;
  }
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Creates one partition and attaches it, moving into it the Events the default partition holds
 * for its range. Created apart and attached rather than `create table ... partition of`: attaching
 * takes a lock on `events` that lets recording go on (PostgreSQL's SHARE UPDATE EXCLUSIVE), and
 * the exclusive one only on the default partition, which no Event is routed to while partitions
 * are ahead. A lock not had within `lockTimeoutMs` rolls everything back (55P03) for the next run.
 * Answers how many Events moved.
 */
export async function createEventPartition(
  client: PoolClient,
  partition: EventPartition & { from: Date },
  lockTimeoutMs: number,
): Promise<number> {
  const name = quoteIdent(partition.name);
  const from = partition.from.toISOString();
  const to = partition.to.toISOString();
  return inTransaction(client, lockTimeoutMs, async () => {
    await client.query(`create table ${name} (like events including defaults)`);
    const moved = await client.query(
      `with moved as (
         delete from events_default where received_at >= $1 and received_at < $2 returning *
       )
       insert into ${name} select * from moved`,
      [from, to],
    );
    // The bound as a checked constraint: attaching then trusts it instead of scanning.
    await client.query(
      `alter table ${name} add constraint ${quoteIdent(`${partition.name}_bound`)}
         check (received_at >= '${from}' and received_at < '${to}')`,
    );
    await client.query(
      `alter table events attach partition ${name} for values from ('${from}') to ('${to}')`,
    );
    await client.query(
      `alter table ${name} drop constraint ${quoteIdent(`${partition.name}_bound`)}`,
    );
    return moved.rowCount ?? 0;
  });
}

/**
 * Detaches and drops one partition: its Events go at once, with no row deleted and nothing left
 * for vacuum. Detaching takes `events` exclusively for the moment it lasts (recording waits,
 * milliseconds); a lock not had within `lockTimeoutMs` leaves it for the next run.
 */
export async function dropEventPartition(
  client: PoolClient,
  partition: EventPartition,
  lockTimeoutMs: number,
): Promise<void> {
  const name = quoteIdent(partition.name);
  await inTransaction(client, lockTimeoutMs, async () => {
    await client.query(`alter table events detach partition ${name}`);
    await client.query(`drop table ${name}`);
  });
}
