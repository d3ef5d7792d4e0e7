// The growth benchmark's databases: each migrated by the events service's own runner, with
// weekly partitions covering the past year and the two ahead the upkeep keeps (made by the
// service's createEventPartition), and the Contact whose 1,000 Events the export reads. The
// loaded one also gets `--events` Events over 1,000,000 Contacts of 1,000 Tenants, spread over the
// year and written in time order as recording writes them, then `vacuum analyze`; and the
// projection of those Contacts' identities that recording resolves them from. Beside them, what
// the table takes on disk: heap, each index, TOAST, each column.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createPool, runMigrations } from '@herald/db';
import { EVENT_PROPERTIES } from './lib.mjs';

export const DAY_MS = 86_400_000;
export const WEEK_MS = 7 * DAY_MS;
export const YEAR_MS = 365 * DAY_MS;
export const TENANTS = 1_000;
export const CONTACTS = 1_000_000;
/** The Events of the Contact the export reads, spread over the year. */
export const EXPORT_EVENTS = 1_000;
/** Partitions after the current one, as EVENTS_PARTITIONS_AHEAD's default keeps them. */
export const AHEAD = 2;
const LOAD_CHUNK = 1_000_000;
/** Rows the column sizes are averaged over, about. */
const SAMPLE_ROWS = 50_000;
/** The columns of `events`, as the size breakdown names them. */
const COLUMNS = [
  'id',
  'tenant_id',
  'contact_id',
  'organization_external_id',
  'event_name',
  'occurred_at',
  'received_at',
  'dedup_key',
  'properties',
];

const EVENT_NAMES = [
  'Page Viewed',
  'Product Viewed',
  'Added to Cart',
  'Checkout Started',
  'Order Completed',
  'Email Opened',
  'Email Clicked',
  'Signed In',
  'Subscription Renewed',
  'Search Performed',
  'Review Submitted',
  'Support Ticket Opened',
];

/**
 * A module of the events service's build (services/events/dist).
 * @param {string} repoRoot
 * @param {string} file from dist/
 */
export function eventsModule(repoRoot, file) {
  return import(pathToFileURL(path.join(repoRoot, 'services/events/dist', file)).href);
}

/** The uuid of the loaded data's Tenant `n` (SQL), as the loader and the sweep name them. */
export const tenantIdSql = (n) => `md5('tenant-' || (${n}))::uuid`;

/**
 * The uuids the benchmark gives the loaded data's Tenants `0..count-1`, and the export's Contact.
 * @param {import('pg').Client} client
 * @param {number} count
 */
export async function syntheticIds(client, count) {
  const { rows } = await client.query(
    `select array(select ${tenantIdSql('n')}::text from generate_series(0, $1 - 1) n) as tenants,
            md5('export-contact')::uuid::text as contact`,
    [count],
  );
  return {
    tenants: rows[0].tenants,
    exportTenant: rows[0].tenants[0],
    exportContact: rows[0].contact,
  };
}

/**
 * The events service's migrations, then the partitions of the past year and ahead in place of
 * the migration's first partition (empty in a new database). Resolves to the partitions made.
 * @param {{ url: string, client: import('pg').Client, repoRoot: string, now: number }} db
 */
export async function prepare({ url, client, repoRoot, now }) {
  const pool = createPool({ connectionString: url, applicationName: 'bench-growth', max: 1 });
  try {
    await runMigrations(pool, path.join(repoRoot, 'services/events/migrations'));
  } finally {
    await pool.end();
  }
  const { createEventPartition } = await eventsModule(
    repoRoot,
    'partitions/data/event-partitions.js',
  );
  const { partitionName, partitionsToCreate } = await eventsModule(
    repoRoot,
    'partitions/partition-plan.js',
  );
  await client.query('alter table events detach partition events_before_partitions');
  await client.query('drop table events_before_partitions');
  // On the upkeep's grid (whole spans since 1970), so that its runs continue from the newest.
  const start = Math.floor((now - YEAR_MS) / WEEK_MS) * WEEK_MS;
  const first = {
    name: partitionName(new Date(start)),
    from: new Date(start),
    to: new Date(start + WEEK_MS),
  };
  const all = [
    first,
    ...partitionsToCreate([first], new Date(now), { partitionMs: WEEK_MS, ahead: AHEAD }),
  ];
  for (const partition of all) await createEventPartition(client, partition, 10_000);
  return all;
}

/**
 * `count` Events in chunks, oldest first: received over the year before `now`, each about a
 * random one of CONTACTS Contacts (Contact c of Tenant c mod TENANTS), 1 in 20 naming an
 * organization, 1 in 3 with a dedupKey, ids time-ordered as the service makes them.
 * @param {import('pg').Client} client
 * @param {{ count: number, now: number, onChunk?: (done: number) => void }} load
 */
export async function loadEvents(client, { count, now, onChunk }) {
  const from = new Date(now - YEAR_MS).toISOString();
  const stepMs = YEAR_MS / count;
  const properties = JSON.stringify(EVENT_PROPERTIES);
  // Loss of the last commits on a crash is no matter for a scratch database; speed is.
  await client.query('set synchronous_commit = off');
  for (let done = 0; done < count; done += LOAD_CHUNK) {
    const n = Math.min(LOAD_CHUNK, count - done);
    await client.query(
      `insert into events (id, tenant_id, contact_id, organization_external_id, event_name,
                           occurred_at, received_at, dedup_key, properties)
       select (lpad(to_hex((extract(epoch from r) * 1000)::bigint), 12, '0') || '7'
                 || substr(h, 1, 3) || '8' || substr(h, 4, 15))::uuid,
              ${tenantIdSql(`c % ${TENANTS}`)}, md5('contact-' || c)::uuid,
              case when g % 20 = 0 then 'org-' || (c % 97) end,
              ($5::text[])[(1 + g % ${EVENT_NAMES.length})::int],
              r - (g % 5000) * interval '1 millisecond', r,
              case when g % 3 = 0 then 'order-' || h end, $4
       from generate_series($1::bigint + 1, $1::bigint + $2) as g,
            lateral (select $3::timestamptz + (g * ${stepMs}) * interval '1 millisecond' as r,
                            (hashint8(g)::bigint & 2147483647) % ${CONTACTS} as c,
                            md5(g::text) as h) as x`,
      [done, n, from, properties, EVENT_NAMES],
    );
    onChunk?.(done + n);
  }
}

/**
 * The export's Contact: EXPORT_EVENTS Events of the first Tenant, spread over the year.
 * @param {import('pg').Client} client
 * @param {number} now
 */
export async function loadExportContact(client, now) {
  await client.query(
    `insert into events (id, tenant_id, contact_id, event_name, occurred_at, received_at,
                         dedup_key, properties)
     select gen_random_uuid(), ${tenantIdSql(0)}, md5('export-contact')::uuid,
            'Order Completed', r, r, 'export-' || i, $3
     from generate_series(0, $2 - 1) as i,
          lateral (select $1::timestamptz + ((i + 0.5) * ${YEAR_MS / EXPORT_EVENTS})
                          * interval '1 millisecond' as r) as x`,
    [new Date(now - YEAR_MS).toISOString(), EXPORT_EVENTS, JSON.stringify(EVENT_PROPERTIES)],
  );
}

/**
 * The Contact identity projection recording resolves Contacts from: the bench Tenant's Contacts
 * (made through the API) and, with `synthetic`, the loaded data's million.
 * @param {import('pg').Client} client
 * @param {{ tenantId: string, contacts: { id: string, externalId: string }[] }} tenant
 * @param {boolean} synthetic
 */
export async function loadIdentities(client, tenant, synthetic) {
  await client.query(
    `insert into contact_identities (tenant_id, contact_id, external_id_sha256, updated_at)
     select $1, c.id, sha256(convert_to(c.ext, 'UTF8')), now()
     from unnest($2::uuid[], $3::text[]) as c(id, ext)`,
    [tenant.tenantId, tenant.contacts.map((c) => c.id), tenant.contacts.map((c) => c.externalId)],
  );
  if (!synthetic) return;
  await client.query(
    `insert into contact_identities (tenant_id, contact_id, external_id_sha256, updated_at)
     select ${tenantIdSql(`c % ${TENANTS}`)}, md5('contact-' || c)::uuid,
            sha256(convert_to('customer-' || c, 'UTF8')), now()
     from generate_series(0, ${CONTACTS - 1}) as c`,
  );
}

/**
 * What `events` takes on disk, summed over its partitions (a partitioned table itself holds
 * nothing): the heap, the free-space and visibility maps, TOAST, each index; and the average
 * size of a row and of each column, from a sample of the pages holding about SAMPLE_ROWS rows.
 * @param {import('pg').Client} client
 * @param {number} rows the Events in the table, about
 */
export async function tableBytes(client, rows) {
  const { rows: totals } = await client.query(
    `with leaves as (select relid from pg_partition_tree('events') where isleaf)
     select count(*)::int as partitions,
            coalesce(sum(pg_relation_size(l.relid)), 0)::float8 as heap,
            coalesce(sum(pg_relation_size(l.relid, 'fsm') + pg_relation_size(l.relid, 'vm')), 0)::float8 as maps,
            coalesce(sum(case when c.reltoastrelid <> 0
                              then pg_total_relation_size(c.reltoastrelid) else 0 end), 0)::float8 as toast,
            coalesce(sum(pg_total_relation_size(l.relid)), 0)::float8 as total,
            coalesce(sum(c.relpages), 0)::float8 as pages
     from leaves l join pg_class c on c.oid = l.relid`,
  );
  const { rows: indexes } = await client.query(
    `select i.indexrelid::regclass::text as name, pg_get_indexdef(i.indexrelid) as definition,
            (select coalesce(sum(pg_relation_size(t.relid)), 0)
             from pg_partition_tree(i.indexrelid) t where t.isleaf)::float8 as bytes
     from pg_index i where i.indrelid = 'events'::regclass order by 1`,
  );
  const { rows: sample } = await client.query(
    `select count(*)::int as sampled,
            avg(pg_column_size(e.*))::float8 as "row",
            ${COLUMNS.map((c) => `coalesce(avg(coalesce(pg_column_size(${c}), 0)), 0)::float8 as ${c}`).join(',\n            ')}
     from events e tablesample system ($1)`,
    // Not `repeatable`: with one seed, every partition would skip the same page numbers.
    [Math.min(100, Math.max(0.01, (100 * SAMPLE_ROWS) / Math.max(rows, 1)))],
  );
  const { sampled, row, ...columns } = sample[0];
  return { ...totals[0], indexes, sample: { sampled, row, columns } };
}

/**
 * The bytes of the loaded data's Contact identity projection (not per Event: per Contact).
 * @param {import('pg').Client} client
 */
export async function identityBytes(client) {
  const { rows } = await client.query(
    "select pg_total_relation_size('contact_identities')::float8 as bytes",
  );
  return rows[0].bytes;
}
