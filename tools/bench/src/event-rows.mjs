// What PostgreSQL spends per Event on each row a recording writes, and on the relay's reading
// and deleting of the Event's message: 100-Event statements shaped like the recording
// function's, into a database of their own migrated like the events service's, each variant
// adding one kind of row to the one before, each from empty tables, alternating in the same
// run. The figure is PostgreSQL's CPU per Event (every backend, from /proc); the Event row alone
// is the baseline. A design that writes fewer rows per Event (no outbox copy, a smaller claim)
// saves what those rows cost here.
import { createHash, randomUUID } from 'node:crypto';
import path from 'node:path';
import {
  EVENT_PROPERTIES,
  eventRecordedValue,
  fmt,
  machineCores,
  roundFigures,
  stats,
} from './lib.mjs';
import { cpuReading, stackPids } from './procstat.mjs';
import { withScratchDatabase } from './scratch-database.mjs';

export const name = 'event-rows';
export const defaultConnections = 4;

const BATCH = 100;
const RELAY_BATCH = 1000;
const CONTACTS = 200;
const ROUNDS = 2;
const DATABASE = 'herald_bench_event_rows';
const TOPIC = 'herald.events.recorded';
const PROPERTIES = JSON.stringify(EVENT_PROPERTIES);

// The parts of each statement; $1 tenant, $2 ids, $3 contacts, $4 dedupKeys, $5 messages,
// $6 claim keys. The messages and claim keys are made here, as the service makes them.
const EVENTS = `insert into events (id, tenant_id, contact_id, event_name, occurred_at, dedup_key,
      properties)
    select e.id, $1::uuid, e.contact_id, 'Bench Event', now(), e.dedup_key, '${PROPERTIES}' from e`;
const E = `e as (select * from unnest($2::uuid[], $3::uuid[], $4::text[], $5::text[])
      as u(id, contact_id, dedup_key, message))`;
const MESSAGES = `insert into outbox (topic, key, value, headers, subject_id)
    select '${TOPIC}', $1::uuid || ':contact:' || e.contact_id, e.message, '{}', e.contact_id from e`;
/**
 * The claim as recording makes it: taken unless an unexpired one holds the key.
 * @param {string} table
 * @param {string} type the claim key's
 */
const claims = (table, type) => `claimed as (
    insert into ${table} (tenant_id, dedup_key, event_id)
    select $1::uuid, k.key, k.id from unnest($6::${type}[], $2::uuid[]) as k(key, id)
    on conflict (tenant_id, dedup_key) do update
      set event_id = excluded.event_id, claimed_at = now()
      where ${table}.claimed_at < now() - interval '60 seconds'
    returning ${table}.event_id)`;
const claimedOnly = 'where exists (select 1 from claimed as c where c.event_id = e.id)';

/**
 * One kind of statement measured: `sql` with the rows it writes, and how it keys the claim.
 * @typedef {{ name: string, label: string, rows: string, sql?: string,
 *   claimKey?: (dedupKey: string) => string }} Variant
 */
/** @type {Variant[]} */
const VARIANTS = [
  {
    name: 'event',
    label: 'Event row',
    rows: 'events',
    sql: `with ${E} ${EVENTS}`,
  },
  {
    name: 'event-message',
    label: '+ outbox message',
    rows: 'events, outbox',
    sql: `with ${E}, ev as (${EVENTS}) ${MESSAGES}`,
  },
  {
    name: 'event-message-claim',
    label: '+ dedup claim (as stored)',
    rows: 'events, outbox, dedup_claims (SHA-256 as 64 hex characters)',
    sql: `with ${E}, ${claims('dedup_claims', 'text')},
      ev as (${EVENTS} ${claimedOnly}) ${MESSAGES} ${claimedOnly}`,
    claimKey: (dedupKey) => createHash('sha256').update(dedupKey).digest('hex'),
  },
  {
    name: 'event-message-claim-16',
    label: '+ dedup claim (16-byte key)',
    rows: 'events, outbox, a claim keyed by the first 16 bytes of the SHA-256 (uuid)',
    sql: `with ${E}, ${claims('dedup_claims_16', 'uuid')},
      ev as (${EVENTS} ${claimedOnly}) ${MESSAGES} ${claimedOnly}`,
    claimKey: (dedupKey) => {
      const hex = createHash('sha256').update(dedupKey).digest('hex');
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
    },
  },
];
/**
 * What the tables and the results say of a variant.
 * @param {Variant} v
 */
const described = ({ name, label, rows }) => ({ name, label, rows });

/** @type {Variant} */
const RELAY = {
  name: 'relay',
  label: 'relay: read + delete',
  rows: `the relay's poll: the oldest ${RELAY_BATCH} outbox rows read, then deleted`,
};

/**
 * What the rounds share: the scratch database's clients, PostgreSQL's CPU so far, the Tenant and
 * Contacts the Events belong to, and the dedupKeys' counter.
 * @typedef {object} Bench
 * @property {import('pg').Client[]} clients
 * @property {() => number} cpu PostgreSQL's CPU ms so far
 * @property {number} seconds
 * @property {string} startedAt
 * @property {() => string} timeOrderedUuid
 * @property {string} tenant
 * @property {string[]} contacts
 * @property {number} key
 */
/**
 * One round of one variant: Events/s, the statements' latencies and PostgreSQL's CPU.
 * @typedef {{ round: number, name: string, label: string, rows: string, events: number,
 *   eventsPerSecond: number, latencies: number[], cpuMs: number, cpuUsPerEvent?: number }} Round
 */

/** @param {import('./lib.mjs').RunOptions} options */
export async function run({ seconds, connections, repoRoot }) {
  const startedAt = new Date().toISOString();
  // Built by the stack's `up` before this runs.
  const { timeOrderedUuid } = await import('@herald/db');
  return withScratchDatabase(DATABASE, connections, async ({ clients, url }) => {
    await migrate(url, repoRoot);
    const { postgres } = await stackPids();
    if (!postgres) throw new Error('the stack reports no PostgreSQL process to measure');
    /** @type {Bench} */
    const bench = {
      clients,
      cpu: () => cpuReading({ postgres }).ms.postgres,
      seconds,
      startedAt,
      timeOrderedUuid,
      tenant: randomUUID(),
      contacts: Array.from({ length: CONTACTS }, () => randomUUID()),
      key: 0,
    };
    console.log(
      `\n## event-rows (${BATCH}-Event statements, ${connections} connections; the relay ${RELAY_BATCH} rows a poll on one)`,
    );
    /** @type {Round[]} */
    const rounds = [];
    for (let round = 1; round <= ROUNDS; round += 1) {
      for (const v of VARIANTS) rounds.push({ round, ...described(v), ...(await write(bench, v)) });
      rounds.push({ round, ...described(RELAY), ...(await relay(bench)) });
    }
    for (const r of rounds) r.cpuUsPerEvent = r.events > 0 ? (r.cpuMs * 1000) / r.events : NaN;
    const figures = roundFigures(rounds);
    printRounds(rounds, figures.mean('event', 'cpuUsPerEvent'));
    const added = printAdded(figures);
    return { startedAt, cores: machineCores(), connections, seconds, ...results(figures, added) };
  });
}

/**
 * The scratch database migrated like the events service's, with a claims table keyed by 16 bytes.
 * @param {string} url
 * @param {string} repoRoot
 */
async function migrate(url, repoRoot) {
  const { createPool, runMigrations } = await import('@herald/db');
  const migrations = createPool({ connectionString: url, applicationName: 'bench', max: 1 });
  try {
    await runMigrations(migrations, path.join(repoRoot, 'services', 'events', 'migrations'));
    await migrations.query(
      `create table dedup_claims_16 (tenant_id uuid not null, dedup_key uuid not null,
         event_id uuid not null, claimed_at timestamptz not null default now(),
         primary key (tenant_id, dedup_key));
       create index on dedup_claims_16 (claimed_at)`,
    );
  } finally {
    await migrations.end();
  }
}

/**
 * One statement's values: BATCH new Events, their Contacts, dedupKeys and messages made as the
 * service makes them, and the claim keys when `v` claims.
 * @param {Bench} bench
 * @param {Variant} v
 */
function statementValues(bench, v) {
  const { tenant, contacts, startedAt } = bench;
  const ids = [];
  const owners = [];
  const keys = [];
  const messages = [];
  for (let i = 0; i < BATCH; i += 1) {
    const id = bench.timeOrderedUuid();
    const contact = contacts[(bench.key + i) % CONTACTS];
    const dedupKey = `bench-${startedAt}-${(bench.key += 1)}`;
    ids.push(id);
    owners.push(contact);
    keys.push(dedupKey);
    messages.push(
      eventRecordedValue({ id, tenantId: tenant, contactId: contact, dedupKey, at: startedAt }),
    );
  }
  /** @type {unknown[]} */
  const values = [tenant, ids, owners, keys, messages];
  if (v.claimKey) values.push(keys.map(v.claimKey));
  return values;
}

/**
 * Events/s and PostgreSQL's CPU µs per Event of one variant, `seconds` long. Each starts from
 * empty tables with nothing left to write out (the variant before's rows, or the benchmark
 * before's), so none pays for another's.
 * @param {Bench} bench
 * @param {Variant} v
 */
async function write(bench, v) {
  const { clients, cpu } = bench;
  await clients[0].query('truncate events, outbox, dedup_claims, dedup_claims_16');
  await clients[0].query('checkpoint');
  const end = performance.now() + bench.seconds * 1000;
  let events = 0;
  /** @type {number[]} */
  const latencies = [];
  const before = cpu();
  const started = performance.now();
  await Promise.all(
    clients.map(async (client) => {
      while (performance.now() < end) {
        const values = statementValues(bench, v);
        const sent = performance.now();
        await client.query({ name: v.name, text: v.sql, values });
        latencies.push(performance.now() - sent);
        events += BATCH;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  return { events, eventsPerSecond: events / elapsed, latencies, cpuMs: cpu() - before };
}

/**
 * The relay's polls, one connection as the relay has, until the time or the rows run out.
 * @param {Bench} bench
 */
async function relay({ clients, cpu, seconds }) {
  const [client] = clients;
  const end = performance.now() + seconds * 1000;
  let events = 0;
  /** @type {number[]} */
  const latencies = [];
  const before = cpu();
  const started = performance.now();
  while (performance.now() < end) {
    const sent = performance.now();
    await client.query('begin');
    const { rows } = await client.query({
      name: 'relay-read',
      text: 'select id, topic, key, value, headers from outbox order by id limit $1',
      values: [RELAY_BATCH],
    });
    await client.query({
      name: 'relay-delete',
      text: 'delete from outbox where id = any($1::bigint[])',
      values: [rows.map((r) => r.id)],
    });
    await client.query('commit');
    latencies.push(performance.now() - sent);
    events += rows.length;
    if (rows.length < RELAY_BATCH) break;
  }
  const elapsed = (performance.now() - started) / 1000;
  return { events, eventsPerSecond: events / elapsed, latencies, cpuMs: cpu() - before };
}

/**
 * Each round's figures, against the Event row alone (`base`, µs per Event).
 * @param {Round[]} rounds
 * @param {number} base
 */
function printRounds(rounds, base) {
  console.log(
    '| round | rows per Event | Events/s | p50 ms | p99 ms | PostgreSQL CPU µs per Event | × the Event row |\n' +
      '|---:|---|---:|---:|---:|---:|---:|\n' +
      rounds
        .map((r) => {
          const { p50, p99 } = stats(r.latencies);
          return `| ${r.round} | ${r.label}: ${r.rows} | ${fmt(r.eventsPerSecond, 0)} | ${fmt(p50)} | ${fmt(p99)} | ${fmt(r.cpuUsPerEvent)} | ${fmt(r.cpuUsPerEvent / base, 2)} |`;
        })
        .join('\n'),
  );
}

/**
 * Prints what each row adds to the Event row's CPU per Event, and returns those figures.
 * @param {ReturnType<typeof roundFigures<Round>>} figures
 */
function printAdded({ mean }) {
  /** @param {string} n */
  const us = (n) => mean(n, 'cpuUsPerEvent');
  const added = {
    message: us('event-message') - us('event'),
    claim: us('event-message-claim') - us('event-message'),
    claim16: us('event-message-claim-16') - us('event-message'),
    relay: us('relay'),
  };
  const recorded = us('event-message-claim') + added.relay;
  console.log(
    `PostgreSQL CPU per Event: the Event row ${fmt(us('event'))} µs, its outbox message ` +
      `+${fmt(added.message)}, its claim +${fmt(added.claim)} (with a 16-byte key ` +
      `+${fmt(added.claim16)}), the relay's read and delete ${fmt(added.relay)}; of the ` +
      `${fmt(recorded)} µs in all, the message and its relaying are ` +
      `${fmt((100 * (added.message + added.relay)) / recorded, 0)} %, the claim ` +
      `${fmt((100 * added.claim) / recorded, 0)} %`,
  );
  return added;
}

/**
 * The rounds, what each row adds, and each variant's figures as the chart draws them.
 * @param {ReturnType<typeof roundFigures<Round>>} figures
 * @param {ReturnType<typeof printAdded>} added
 */
function results(figures, added) {
  const { mean } = figures;
  const base = mean('event', 'cpuUsPerEvent');
  return {
    rounds: figures.summary(),
    addedUsPerEvent: added,
    measurements: [...VARIANTS, RELAY].map((v, i) => {
      const { p50, p99 } = figures.latency(v.name);
      return {
        name: v.name,
        label: v.label,
        group: i === 0 ? 'floor' : 'rows',
        primary: {
          value: mean(v.name, 'cpuUsPerEvent'),
          unit: 'µs/Event',
          ...(i > 0 && { floor: base, floorShare: 1 }),
        },
        eventsPerSecond: mean(v.name, 'eventsPerSecond'),
        // Of one statement (the relay: of one poll).
        p50,
        p99,
      };
    }),
  };
}

/**
 * The chart's input (chart.mjs) from this benchmark's results.
 * @param {{ startedAt: string, cores: number, connections: number, seconds: number,
 *   measurements: object[] }} s
 */
export function chartData(s) {
  return {
    title: 'Herald event rows benchmark: what each row of a recorded Event costs PostgreSQL',
    subtitle: `${s.startedAt}, ${s.cores} cores, ${s.connections} connections, ${s.seconds} s per round, ${BATCH}-Event statements`,
    measurements: s.measurements,
    primaryPanel: {
      title: "PostgreSQL's CPU per Event, µs: one scale for every bar (shorter is cheaper)",
      sharedScale: true,
    },
    legend: {
      floor: 'baseline: the Event row alone',
      floorShare: 'µs per Event for the Event row',
    },
  };
}
