// Event ids: 1,000-row inserts into a table shaped like the events service's (its two indexes,
// several million rows already in it), with random ids (UUID version 4) and time-ordered ones
// (version 7, what the service makes), alternating in the same run. A random key lands on a
// different page of the primary-key index each time, and the first change to a page after a
// checkpoint copies the whole page into the WAL: the WAL's full-page images are counted too.
import { randomUUID } from 'node:crypto';
import { fmt, machineCores, roundFigures, stats } from './lib.mjs';
import { withScratchDatabase } from './scratch-database.mjs';

export const name = 'event-ids';
export const defaultConnections = 4;

const ROWS = 2_000_000;
const BATCH = 1000;
const CONTACTS = 256;
const ROUNDS = 2;
const DATABASE = 'herald_bench_event_ids';

export async function run({ seconds, connections }) {
  const startedAt = new Date().toISOString();
  // Built by the stack's `up` before this runs.
  const { timeOrderedUuid } = await import('@herald/db');
  return withScratchDatabase(DATABASE, connections, async ({ clients }) => {
    const [first] = clients;
    const tenant = randomUUID();
    const contacts = Array.from({ length: CONTACTS }, () => randomUUID());
    const setupStart = Date.now();
    await first.query(
      `create table events (id uuid primary key, tenant_id uuid not null, contact_id uuid,
         event_name text not null, occurred_at timestamptz not null,
         received_at timestamptz not null default now(), dedup_key text, properties text)`,
    );
    await first.query(
      'create index events_tenant_contact_idx on events (tenant_id, contact_id, received_at, id)',
    );
    await first.query(
      `insert into events (id, tenant_id, contact_id, event_name, occurred_at, dedup_key, properties)
       select gen_random_uuid(), $1, ($2::uuid[])[1 + i % ${CONTACTS}], 'Bench Event', now(),
              'k' || i, '{"plan":"pro","amount":42.5}'
       from generate_series(1, ${ROWS}) as i`,
      [tenant, contacts],
    );
    await first.query('checkpoint');
    console.log(
      `\n## event-ids (${ROWS.toLocaleString('en-US')} rows first, ${fmt((Date.now() - setupStart) / 1000, 0)} s)`,
    );

    let key = 0;
    const wal = async () =>
      (
        await first.query(
          'select wal_fpi::float8 as fpi, wal_bytes::float8 as bytes from pg_stat_wal',
        )
      ).rows[0];
    async function phase(newId) {
      const end = performance.now() + seconds * 1000;
      let rows = 0;
      const latencies = [];
      const before = await wal();
      const started = performance.now();
      await Promise.all(
        clients.map(async (client) => {
          while (performance.now() < end) {
            const ids = [];
            const keys = [];
            for (let i = 0; i < BATCH; i += 1) {
              ids.push(newId());
              keys.push(`b${(key += 1)}`);
            }
            const sent = performance.now();
            await client.query({
              name: 'insert-events',
              text: `insert into events (id, tenant_id, contact_id, event_name, occurred_at, dedup_key, properties)
                     select u.id, $1, ($2::uuid[])[1 + (u.n % ${CONTACTS})::int], 'Bench Event', now(), u.k,
                            '{"plan":"pro","amount":42.5}'
                     from unnest($3::uuid[], $4::text[]) with ordinality as u(id, k, n)`,
              values: [tenant, contacts, ids, keys],
            });
            latencies.push(performance.now() - sent);
            rows += BATCH;
          }
        }),
      );
      const elapsed = (performance.now() - started) / 1000;
      const after = await wal();
      return {
        rowsPerSecond: rows / elapsed,
        latencies,
        fullPageImages: after.fpi - before.fpi,
        walMiB: (after.bytes - before.bytes) / 2 ** 20,
      };
    }

    const variants = [
      { name: 'uuid-v4', label: 'random ids (UUID v4)', newId: randomUUID },
      { name: 'uuid-v7', label: 'time-ordered ids (UUID v7)', newId: timeOrderedUuid },
    ];
    const rounds = [];
    for (let round = 1; round <= ROUNDS; round += 1) {
      for (const v of variants) rounds.push({ round, ...v, ...(await phase(v.newId)) });
    }
    console.log(
      `| round | ids | rows/s | p50 ms | p99 ms | full-page images | WAL MiB |\n|---:|---|---:|---:|---:|---:|---:|\n` +
        rounds
          .map((r) => {
            const { p50, p99 } = stats(r.latencies);
            return `| ${r.round} | ${r.label} | ${fmt(r.rowsPerSecond, 0)} | ${fmt(p50)} | ${fmt(p99)} | ${fmt(r.fullPageImages, 0)} | ${fmt(r.walMiB, 0)} |`;
          })
          .join('\n'),
    );
    const figures = roundFigures(rounds);
    const mean = (v) => figures.mean(v, 'rowsPerSecond');
    const ratio = mean('uuid-v7') / mean('uuid-v4');
    console.log(`time-ordered / random ids: ${fmt(ratio, 2)}x the rows per second`);
    return {
      startedAt,
      cores: machineCores(),
      connections,
      seconds,
      rows: ROWS,
      rounds: figures.summary(),
      ratio,
      measurements: variants.map((v, i) => {
        const { p50, p99 } = figures.latency(v.name);
        return {
          name: v.name,
          label: v.label,
          group: i === 0 ? 'floor' : 'ids',
          primary: {
            value: mean(v.name),
            unit: 'rows/s',
            ...(i > 0 && { floor: mean('uuid-v4'), floorShare: 1 }),
          },
          // Of one 1,000-row insert.
          p50,
          p99,
          fullPageImages: figures.total(v.name, 'fullPageImages'),
        };
      }),
    };
  });
}

/** The chart's input (chart.mjs) from this benchmark's results. */
export function chartData(s) {
  return {
    title: 'Herald event ids benchmark',
    subtitle: `${s.startedAt}, ${s.cores} cores, ${s.connections} connections, ${s.seconds} s per round, ${s.rows.toLocaleString('en-US')} rows first`,
    measurements: s.measurements,
    legend: { floor: 'baseline: random ids (UUID v4)', floorShare: 'rows/s with random ids' },
  };
}
