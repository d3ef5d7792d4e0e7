// What the side-tables benchmark reads from PostgreSQL every sample: the size of each side table
// (pg_total_relation_size: heap, indexes and TOAST), its live and dead rows and its vacuums from
// pg_stat_user_tables, and the oldest open transaction that holds the events database's xmin
// horizon (no vacuum can clean a row deleted after it began).
import pg from 'pg';
import { databaseUrl } from '@herald/stack/index.mjs';

/**
 * The tables followed: the events service's outbox and dedup claims, and the other outboxes.
 * @type {{ series: string, database: string, table: string }[]}
 */
export const SIDE_TABLES = [
  { series: 'events.outbox', database: 'herald_events', table: 'outbox' },
  { series: 'events.dedup_claims', database: 'herald_events', table: 'dedup_claims' },
  { series: 'contacts.outbox', database: 'herald_contacts', table: 'outbox' },
  { series: 'billing.outbox', database: 'herald_billing', table: 'outbox' },
];

/**
 * One table at one moment.
 * @typedef {object} TableSample
 * @property {number} bytes       table, indexes and TOAST
 * @property {number} heapBytes
 * @property {number} indexBytes
 * @property {number} live        n_live_tup
 * @property {number} dead        n_dead_tup
 * @property {number} vacuums     autovacuum_count + vacuum_count (since the statistics reset)
 */
/**
 * The oldest open transaction holding the horizon, other than the sampler's.
 * @typedef {{ database: string, application: string, state: string, transactionSeconds: number,
 *   query: string }} Horizon
 */
/**
 * @typedef {object} Sample
 * @property {number} t  seconds since the load started (negative: before it)
 * @property {Record<string, TableSample>} tables  by series name
 * @property {Horizon | null} horizon  in the events database
 */

const TABLE_SQL = `select c.relname as table,
       pg_total_relation_size(c.oid)::float8 as bytes,
       pg_relation_size(c.oid)::float8 as heap_bytes,
       pg_indexes_size(c.oid)::float8 as index_bytes,
       s.n_live_tup::float8 as live, s.n_dead_tup::float8 as dead,
       (s.autovacuum_count + s.vacuum_count)::float8 as vacuums
  from pg_class c join pg_stat_user_tables s on s.relid = c.oid
 where s.schemaname = 'public' and c.relname = any($1::text[])`;

// What holds the events database's horizon: a snapshot taken in it (backend_xmin), and any
// transaction with a transaction id in any database of the server, since every snapshot taken
// meanwhile counts it as running (a bulk load elsewhere stops vacuum here too). A VACUUM's own
// snapshot is ignored by other vacuums, so vacuums are left out.
const HORIZON_SQL = `select datname as database,
       coalesce(nullif(application_name, ''), backend_type) as application, state,
       coalesce(extract(epoch from clock_timestamp() - xact_start), 0)::float8 as seconds,
       left(regexp_replace(query, '\\s+', ' ', 'g'), 80) as query
  from pg_stat_activity
 where pid <> pg_backend_pid() and backend_type = 'client backend'
   and query !~* '^\\s*vacuum'
   and (backend_xid is not null or (datname = current_database() and backend_xmin is not null))
 order by xact_start
 limit 1`;

/**
 * A client per database, kept for the run (a sample every 30 s need not connect each time).
 * @returns {Promise<{ sample: (t: number) => Promise<Sample>, compact: () => Promise<void>,
 *   close: () => Promise<void> }>}
 */
export async function openSampler() {
  const databases = [...new Set(SIDE_TABLES.map((s) => s.database))];
  /** @type {Map<string, pg.Client>} */
  const clients = new Map();
  for (const database of databases) {
    const client = new pg.Client({
      connectionString: databaseUrl(database),
      application_name: 'herald-bench-side-tables',
    });
    client.on('error', () => {});
    await client.connect();
    clients.set(database, client);
  }

  /** @param {number} t */
  async function sample(t) {
    /** @type {Sample} */
    const out = { t, tables: {}, horizon: null };
    for (const [database, client] of clients) {
      const wanted = SIDE_TABLES.filter((s) => s.database === database);
      const { rows } = await client.query(TABLE_SQL, [wanted.map((s) => s.table)]);
      for (const s of wanted) {
        const row = rows.find((r) => r.table === s.table);
        if (!row) continue;
        out.tables[s.series] = {
          bytes: row.bytes,
          heapBytes: row.heap_bytes,
          indexBytes: row.index_bytes,
          live: row.live,
          dead: row.dead,
          vacuums: row.vacuums,
        };
      }
    }
    const horizon = (await clients.get('herald_events').query(HORIZON_SQL)).rows[0];
    if (horizon) {
      out.horizon = {
        database: horizon.database,
        application: horizon.application,
        state: horizon.state,
        transactionSeconds: horizon.seconds,
        query: horizon.query,
      };
    }
    return out;
  }

  // VACUUM FULL rewrites each table and its indexes at their live size: the run then starts from
  // no bloat left by earlier load. It holds an ACCESS EXCLUSIVE lock while it copies the live rows
  // (an outbox that is caught up has none), so requests writing those tables wait that long; it
  // gives up rather than queue everyone behind it when a long transaction holds a table.
  async function compact() {
    for (const s of SIDE_TABLES) {
      const client = clients.get(s.database);
      await client.query(`set lock_timeout = '5s'`);
      await client.query(`vacuum (full, analyze) ${s.table}`);
      await client.query('reset lock_timeout');
    }
  }

  return {
    sample,
    compact,
    async close() {
      await Promise.all([...clients.values()].map((c) => c.end().catch(() => {})));
    },
  };
}

/**
 * The sample taken at `seconds` or first after it (the last one when the run was shorter).
 * @param {Sample[]} samples in time order
 * @param {number} seconds
 */
export function sampleAt(samples, seconds) {
  return samples.find((s) => s.t >= seconds) ?? samples.at(-1);
}

/** Bytes as MiB with one decimal. */
export const mib = (bytes) => bytes / 2 ** 20;

/**
 * How a table's size at the end compares with its size at the sample point: it stays bounded
 * when it grew by no more than the larger of `floorMiB` and `share` of its size there, the
 * "small constant" a table whose dead rows are cleaned as fast as they come stays within.
 */
export const BOUND = { floorMiB: 16, share: 0.25 };

/**
 * Each table's figures: at the start, the sample point and the end, what it grew by, the most
 * dead rows seen and the vacuums during the load.
 * @param {Sample[]} samples in time order, the first before the load
 * @param {number} sampleAtSeconds
 */
export function summarize(samples, sampleAtSeconds) {
  const first = samples[0];
  const point = sampleAt(samples, sampleAtSeconds);
  const last = samples.at(-1);
  return SIDE_TABLES.filter((s) => last.tables[s.series]).map(({ series }) => {
    const start = first.tables[series];
    const at = point.tables[series];
    const end = last.tables[series];
    const grewMiB = mib(end.bytes - at.bytes);
    const allowedMiB = Math.max(BOUND.floorMiB, BOUND.share * mib(at.bytes));
    const seen = samples.map((s) => s.tables[series]).filter(Boolean);
    return {
      series,
      startMiB: mib(start.bytes),
      sampleAtSeconds: point.t,
      atSampleMiB: mib(at.bytes),
      endSeconds: last.t,
      endMiB: mib(end.bytes),
      ratio: at.bytes > 0 ? end.bytes / at.bytes : NaN,
      grewMiB,
      allowedMiB,
      bounded: grewMiB <= allowedMiB,
      endLive: end.live,
      maxDead: Math.max(...seen.map((t) => t.dead)),
      maxLive: Math.max(...seen.map((t) => t.live)),
      vacuums: end.vacuums - start.vacuums,
    };
  });
}

/**
 * The longest-open transaction holding the horizon seen over the run, when it was seen, or null.
 * @param {Sample[]} samples
 * @returns {(Horizon & { t: number }) | null}
 */
export function oldestHorizon(samples) {
  let oldest = null;
  for (const s of samples) {
    const h = s.horizon;
    if (h && h.transactionSeconds > (oldest?.transactionSeconds ?? -1)) oldest = { ...h, t: s.t };
  }
  return oldest;
}
