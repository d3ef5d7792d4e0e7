// One relay's cost and ceiling with nothing else running: the events outbox is filled with
// `MESSAGES` Event messages in one statement (shaped as recording writes them: a Contact's key,
// the JSON value, an unsampled traceparent header, the Contact as subject), and the stack's
// relays drain it. Their CPU and the broker's per message, and messages/s from the commit to an
// empty outbox. Then the same messages go straight from this process through the relay's own
// producer (@herald/kafka, 1,000 per send, one in flight): the producer's share of the relay's
// cost, measured in the same run. Rounds alternate, so that both see the same machine.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { databaseUrl, kafkaBrokers } from '@herald/stack/index.mjs';
import { cpuPerRequest, cpuReading, stackPids } from './procstat.mjs';

export const name = 'relay-drain';

const MESSAGES = 200_000;
const ROUNDS = 3;
const TOPIC = 'herald.events.recorded';
/** Contacts the messages are about: a Contact's Events share its key, as in production. */
const CONTACTS = 1_000;
const SEND_BATCH = 1_000;
const DRAIN_TIMEOUT_MS = 120_000;

/** @typedef {{ round: number, part: 'relay' | 'producer', messages: number, seconds: number,
 *   perSecond: number, usPerMessage: number, brokerUsPerMessage: number }} Round */

/**
 * The rows' value, as `eventRecorded` writes it (receivedAt set at insert), in SQL.
 * @param {string} tenant
 */
const fillSql = (tenant) => `
  insert into outbox (topic, key, value, headers, subject_id)
  select '${TOPIC}', '${tenant}:contact:' || c, json_build_object(
           'version', 1, 'type', 'event.recorded', 'messageId', e, 'tenantId', '${tenant}',
           'eventId', e, 'contactId', c, 'organizationExternalId', null,
           'eventName', 'Order Completed', 'occurredAt', '2026-01-01T00:00:00.000Z',
           'receivedAt', to_char(now() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           'dedupKey', 'relay-drain.' || i,
           'properties', json_build_object('plan', 'pro', 'amount', i % 1000, 'currency', 'EUR')
         )::text,
         jsonb_build_object('traceparent', '00-' || md5(i::text) || '-' || substr(md5(e::text), 1, 16) || '-00'),
         c
  from (select i, gen_random_uuid() as e, md5('${tenant}' || (i % ${CONTACTS}))::uuid as c
        from generate_series(1, $1::int) as i) as s`;

/**
 * The same messages for the producer, built in this process.
 * @param {string} tenant
 * @param {number} count
 */
function messagesOf(tenant, count) {
  const contacts = Array.from({ length: CONTACTS }, () => randomUUID());
  return Array.from({ length: count }, (_, i) => {
    const e = randomUUID();
    const c = contacts[i % CONTACTS];
    return {
      topic: TOPIC,
      key: `${tenant}:contact:${c}`,
      value: JSON.stringify({
        version: 1,
        type: 'event.recorded',
        messageId: e,
        tenantId: tenant,
        eventId: e,
        contactId: c,
        organizationExternalId: null,
        eventName: 'Order Completed',
        occurredAt: '2026-01-01T00:00:00.000Z',
        receivedAt: new Date().toISOString(),
        dedupKey: `relay-drain.${i}`,
        properties: { plan: 'pro', amount: i % 1000, currency: 'EUR' },
      }),
      headers: {
        traceparent: `00-${e.replaceAll('-', '')}-${c.slice(0, 16).replace('-', '0')}-00`,
      },
    };
  });
}

/** @param {Record<string, number>} pids */
const relayPids = (pids) =>
  Object.fromEntries(Object.entries(pids).filter(([n]) => /^events-relay(-\d+)?$/.test(n)));

/**
 * One drain: fill, then wait until the outbox is back to what it held before.
 * @param {pg.Client} db
 * @param {string} tenant
 */
async function drain(db, tenant) {
  const base = Number((await db.query('select count(*) as n from outbox')).rows[0].n);
  const pids = await stackPids();
  const measured = { ...relayPids(pids), kafka: pids.kafka };
  const before = cpuReading(measured);
  await db.query(fillSql(tenant), [MESSAGES]);
  const from = performance.now();
  for (;;) {
    const n = Number((await db.query('select count(*) as n from outbox')).rows[0].n);
    if (n <= base) break;
    if (performance.now() - from > DRAIN_TIMEOUT_MS) {
      throw new Error(
        `the relay left ${n - base} of ${MESSAGES} messages after ${DRAIN_TIMEOUT_MS} ms`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const seconds = (performance.now() - from) / 1000;
  const cpu = cpuPerRequest(before, cpuReading(measured), MESSAGES);
  const relayMs = Object.keys(relayPids(pids)).reduce((sum, n) => sum + (cpu[n] ?? NaN), 0);
  return { seconds, usPerMessage: relayMs * 1000, brokerUsPerMessage: (cpu.kafka ?? NaN) * 1000 };
}

/**
 * The same messages through the relay's producer, from this process.
 * @param {import('@herald/kafka').Producer} producer
 * @param {ReturnType<typeof messagesOf>} messages
 */
async function produce(producer, messages) {
  const pids = await stackPids();
  const before = cpuReading({ kafka: pids.kafka });
  const from = performance.now();
  for (let i = 0; i < messages.length; i += SEND_BATCH) {
    await producer.send({ messages: messages.slice(i, i + SEND_BATCH) });
  }
  const seconds = (performance.now() - from) / 1000;
  const cpu = cpuPerRequest(before, cpuReading({ kafka: pids.kafka }), messages.length);
  return {
    seconds,
    usPerMessage: (cpu.bench ?? NaN) * 1000,
    brokerUsPerMessage: (cpu.kafka ?? NaN) * 1000,
  };
}

/** @param {import('./lib.mjs').RunOptions} _options */
export async function run(_options) {
  const { createKafka } = await import('@herald/kafka');
  const tenant = randomUUID();
  const db = new pg.Client({ connectionString: databaseUrl('herald_events') });
  await db.connect();
  const producer = createKafka({ clientId: 'herald-bench', brokers: [kafkaBrokers] }).producer();
  /** @type {Round[]} */
  const rounds = [];
  try {
    const messages = messagesOf(tenant, MESSAGES);
    await producer.send({ messages: messages.slice(0, SEND_BATCH) }); // connect and warm up
    for (let round = 1; round <= ROUNDS; round += 1) {
      for (const part of /** @type {const} */ (['relay', 'producer'])) {
        const r = part === 'relay' ? await drain(db, tenant) : await produce(producer, messages);
        rounds.push({ round, part, messages: MESSAGES, perSecond: MESSAGES / r.seconds, ...r });
      }
    }
  } finally {
    await producer.close();
    await db.end();
  }
  const summary = summarize(rounds);
  print(summary);
  return summary;
}

/**
 * The rounds and each part's cheapest round (the least disturbed by the machine), with the
 * relay's CPU over the producer's.
 * @param {Round[]} rounds
 */
export function summarize(rounds) {
  /** @param {'relay' | 'producer'} part */
  const best = (part) =>
    rounds.filter((r) => r.part === part).sort((a, b) => a.usPerMessage - b.usPerMessage)[0];
  const relay = best('relay');
  const producer = best('producer');
  return {
    startedAt: new Date().toISOString(),
    messages: MESSAGES,
    rounds,
    relay,
    producer,
    relayOverProducer: relay && producer ? relay.usPerMessage / producer.usPerMessage : NaN,
  };
}

const fmt = (/** @type {number} */ n, digits = 1) =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits }) : '-';

/** @param {ReturnType<typeof summarize>} s */
function print(s) {
  console.log(
    `\n## relay-drain (${fmt(s.messages, 0)} Event messages in the events outbox at once, drained by the stack's relays; ` +
      `then the same messages through the relay's producer from this process, ${SEND_BATCH} per send; rounds alternate)`,
  );
  console.log('| round | part | messages/s | CPU µs per message | broker CPU µs per message |');
  console.log('|---:|---|---:|---:|---:|');
  for (const r of s.rounds) {
    console.log(
      `| ${r.round} | ${r.part === 'relay' ? 'relay: read, send, delete' : 'producer alone'} | ` +
        `${fmt(r.perSecond, 0)} | ${fmt(r.usPerMessage)} | ${fmt(r.brokerUsPerMessage)} |`,
    );
  }
  console.log(
    `the relay, cheapest round: ${fmt(s.relay?.usPerMessage)} µs of CPU and ${fmt(s.relay?.perSecond, 0)} messages/s; ` +
      `the producer alone ${fmt(s.producer?.usPerMessage)} µs: the relay costs ${fmt(s.relayOverProducer, 2)} × its producer`,
  );
}

/** @param {ReturnType<typeof summarize>} s */
export function chartData(s) {
  /**
   * @param {Round} r
   */
  const row = (r) => ({
    name: `${r.part}-${r.round}`,
    label: `${r.part === 'relay' ? 'relay: read, send, delete' : 'producer alone'}, round ${r.round}`,
    group: r.part === 'producer' ? 'floor' : 'part',
    primary: { value: r.usPerMessage, unit: 'µs/message' },
    p50: NaN,
    p99: NaN,
    p99Target: null,
    pass: null,
    failed: 0,
  });
  return {
    title: 'Herald relay drain: CPU per message of one relay, against its producer alone',
    subtitle: `${s.startedAt}, ${fmt(s.messages, 0)} messages a round; relay ${fmt(s.relayOverProducer, 2)} × its producer`,
    measurements: s.rounds.map(row),
    primaryPanel: { title: 'CPU µs per message (less is better)', sharedScale: true },
    legend: { floor: 'the producer alone', floorShare: 'not drawn here' },
  };
}
