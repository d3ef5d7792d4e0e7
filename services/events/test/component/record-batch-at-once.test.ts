// The two batch functions: record_events_batch_at_once writes a whole batch in a few statements,
// record_events_batch each request in its own subtransaction. Given the same batch and the same
// stored state they must answer and write the same; each case runs both in a transaction that
// is rolled back, from the same state. recordBatch runs the first, and the second only after the
// first failed for one request's sake.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createPool, type Pool } from '@herald/db';
import { TEST_POSTGRES_URL } from '@herald/testing';
import { contactLockKey } from '../../src/export-erasure/data/erasure-fence.js';
import {
  BATCH_STATEMENTS,
  batchValues,
  RECEIVED_AT_PLACEHOLDER,
  recordBatch,
  type BatchEvent,
  type BatchRequest,
} from '../../src/recording/data/record-batch.js';
import { hashDedupKey } from '../../src/recording/dedup-key.js';
import { prepareDatabase } from '../support.js';

// Its own database: a test here puts a trigger on events.
const DATABASE = 'herald_events_test_batch_at_once';
const WINDOW_MS = 60_000;
const TOPIC = 'herald.events.recorded';
const OCCURRED = '2026-03-04T05:06:07.123Z';

let pool: Pool;

beforeAll(async () => {
  await prepareDatabase(DATABASE);
  pool = createPool({
    connectionString: `${TEST_POSTGRES_URL}/${DATABASE}`,
    applicationName: 'events-batch-at-once-test',
  });
});
afterAll(() => pool.end());

interface EventSpec {
  contactId?: string;
  organization?: string;
  name?: string;
  dedupKey?: string;
  properties?: string;
}

function batchEvent(tenantId: string, spec: EventSpec): BatchEvent {
  const id = randomUUID();
  return {
    row: {
      id,
      contactId: spec.contactId ?? null,
      organizationExternalId: spec.organization ?? null,
      eventName: spec.name ?? 'x',
      occurredAt: OCCURRED,
      dedupKey: spec.dedupKey ?? null,
      properties: spec.properties ?? null,
    },
    dedupKeyHash: spec.dedupKey === undefined ? null : hashDedupKey(spec.dedupKey),
    messageKey: `${tenantId}:${spec.contactId ?? spec.organization}`,
    messageValue: JSON.stringify({
      tenantId,
      eventId: id,
      receivedAt: RECEIVED_AT_PLACEHOLDER,
      properties: null,
    }),
  };
}

/**
 * A request as transactionOf builds it. `named`: Contacts the request names whose Events are
 * not to be recorded (duplicates dropped before the batch), checked for erasure all the same.
 */
function request(tenantId: string, specs: EventSpec[], named: string[] = []): BatchRequest {
  const events = specs.map((spec) => batchEvent(tenantId, spec));
  const candidates = [...new Set(specs.flatMap((s) => (s.contactId ? [s.contactId] : [])))];
  return {
    tenantId,
    lockKeys: candidates
      .map((id) => BigInt(contactLockKey(tenantId, id)))
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      .map(String),
    contacts: [
      ...candidates.map((contactId) => ({ contactId, candidate: true })),
      ...named
        .filter((id) => !candidates.includes(id))
        .map((contactId) => ({ contactId, candidate: false })),
    ],
    claims: events
      .flatMap((e) =>
        e.dedupKeyHash === null ? [] : [{ dedupKeyHash: e.dedupKeyHash, eventId: e.row.id }],
      )
      .sort((a, b) => (a.dedupKeyHash < b.dedupKeyHash ? -1 : 1)),
    events,
    headers: JSON.stringify({ traceparent: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-00` }),
  };
}

/** What a call answered and wrote, without what differs between two transactions (times, ids). */
async function callAndRollBack(
  statement: { name: string; text: string },
  requests: readonly BatchRequest[],
  tenants: readonly string[],
) {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const { rows } = await client.query<{
      o_status: string;
      o_erased: string[] | null;
      o_lost: string[] | null;
      o_code: string | null;
    }>({
      ...statement,
      // No deadline: the call is checked below (batch_deadline).
      values: [...batchValues(requests, { windowMs: WINDOW_MS, wait: false, topic: TOPIC }), null],
    });
    const answers = rows.map((r) => ({
      status: r.o_status,
      erased: r.o_erased?.slice().sort() ?? null,
      lost: r.o_lost?.slice().sort() ?? null,
      code: r.o_code,
    }));
    const state = await client.query<{ kind: string; row: unknown }>(
      `select 'event' as kind, to_jsonb(e) - 'received_at' as row, e.id::text as o
         from events e where tenant_id = any($1::uuid[])
       union all
       select 'claim', to_jsonb(c) - 'claimed_at', c.tenant_id::text || c.dedup_key
         from dedup_claims c where tenant_id = any($1::uuid[])
       union all
       select 'name', to_jsonb(n) - 'first_seen_at', n.tenant_id::text || n.name
         from event_names n where tenant_id = any($1::uuid[])
       union all
       select 'message',
              jsonb_build_object('topic', topic, 'key', key, 'headers', headers,
                                 'subject_id', subject_id,
                                 'value', regexp_replace(value, '"receivedAt":"[^"]*"', '')),
              lpad(id::text, 20, '0')
         from outbox where value::jsonb ->> 'tenantId' = any($1::text[])
       order by 1, 3`,
      [tenants],
    );
    return { answers, written: state.rows.map((r) => [r.kind, r.row]) };
  } finally {
    await client.query('rollback');
    client.release();
  }
}

async function bothFunctions(requests: readonly BatchRequest[], tenants: readonly string[]) {
  const eachApart = await callAndRollBack(BATCH_STATEMENTS.eachApart, requests, tenants);
  const atOnce = await callAndRollBack(BATCH_STATEMENTS.atOnce, requests, tenants);
  expect(atOnce).toEqual(eachApart);
  return atOnce;
}

async function claim(tenantId: string, dedupKey: string, claimedAgo: string): Promise<string> {
  const eventId = randomUUID();
  await pool.query(
    `insert into dedup_claims (tenant_id, dedup_key, event_id, claimed_at)
     values ($1, $2, $3, now() - $4::interval)`,
    [tenantId, hashDedupKey(dedupKey), eventId, claimedAgo],
  );
  return eventId;
}

describe('record_events_batch_at_once against record_events_batch', () => {
  it('when a batch mixes new, repeated, claimed and expired dedupKeys, Contacts and organizations, then both answer and write the same', async () => {
    const tenant = randomUUID();
    const other = randomUUID();
    const [a, b] = [randomUUID(), randomUUID()];
    await claim(tenant, 'held', '1 second');
    await claim(tenant, 'expired', '2 minutes');
    const requests = [
      request(tenant, [
        { contactId: a, dedupKey: 'k1', properties: '{"n":1}' },
        { contactId: a, dedupKey: 'k2', name: 'second' },
      ]),
      // k1 again: the first request of the batch has it.
      request(tenant, [{ contactId: b, dedupKey: 'k1' }, { contactId: b }]),
      request(tenant, [{ organization: 'acme', name: 'org' }]),
      request(tenant, [
        { contactId: a, dedupKey: 'held' },
        { contactId: a, dedupKey: 'expired', name: 'again' },
      ]),
      // Another Tenant's k1 is its own.
      request(other, [{ contactId: randomUUID(), dedupKey: 'k1' }]),
    ];

    const { answers, written } = await bothFunctions(requests, [tenant, other]);

    expect(answers.map((r) => r.status)).toEqual([
      'recorded',
      'recorded',
      'recorded',
      'recorded',
      'recorded',
      'done',
    ]);
    expect(answers[1]!.lost).toEqual([requests[1]!.events[0]!.row.id]);
    expect(answers[3]!.lost).toEqual([requests[3]!.events[0]!.row.id]);
    expect(written.filter(([kind]) => kind === 'event')).toHaveLength(6);
    expect(written.filter(([kind]) => kind === 'message')).toHaveLength(6);
  });

  it('when requests name erased Contacts, then the one with an Event about one is refused with every erased Contact it names, and the one naming one only through a dropped duplicate is recorded', async () => {
    const tenant = randomUUID();
    const [erased, erasedToo, alive] = [randomUUID(), randomUUID(), randomUUID()];
    await pool.query(
      'insert into erased_contacts (tenant_id, contact_id) values ($1, $2), ($1, $3)',
      [tenant, erased, erasedToo],
    );
    const requests = [
      request(tenant, [{ contactId: alive, dedupKey: 'first' }]),
      request(
        tenant,
        [{ contactId: erased, dedupKey: 'refused' }, { contactId: alive }],
        [erasedToo],
      ),
      request(tenant, [{ contactId: alive, dedupKey: 'third' }], [erased]),
    ];

    const { answers, written } = await bothFunctions(requests, [tenant]);

    expect(answers.map((r) => [r.status, r.erased])).toEqual([
      ['recorded', null],
      ['refused', [erased, erasedToo].sort()],
      ['recorded', null],
      ['done', null],
    ]);
    // The refused request claimed nothing.
    expect(written.filter(([kind]) => kind === 'claim')).toHaveLength(2);
  });

  it("when an erasure holds a request's Contact lock, then that request alone is busy and writes nothing", async () => {
    const tenant = randomUUID();
    const [held, free] = [randomUUID(), randomUUID()];
    const erasure = await pool.connect();
    try {
      // As an erasure does: the Contact's lock, and the Contact marked erased.
      await erasure.query('select pg_advisory_lock($1::bigint)', [contactLockKey(tenant, held)]);
      await pool.query('insert into erased_contacts (tenant_id, contact_id) values ($1, $2)', [
        tenant,
        held,
      ]);
      const requests = [
        request(tenant, [{ contactId: free, dedupKey: 'a' }]),
        request(tenant, [{ contactId: held, dedupKey: 'b' }, { contactId: free }]),
        request(tenant, [{ contactId: free, dedupKey: 'c', name: 'y' }]),
      ];

      const { answers, written } = await bothFunctions(requests, [tenant]);

      expect(answers.map((r) => [r.status, r.erased])).toEqual([
        ['recorded', null],
        ['busy', null],
        ['recorded', null],
        ['done', null],
      ]);
      expect(written.filter(([kind]) => kind === 'event')).toHaveLength(2);
      expect(written.filter(([kind]) => kind === 'name')).toHaveLength(2);
    } finally {
      await erasure.query('select pg_advisory_unlock_all()');
      erasure.release();
    }
  });
});

describe('recordBatch', () => {
  it('when a request of the batch fails in PostgreSQL, then the batch runs again request by request in one transaction: that one fails alone; else it runs at once', async () => {
    const tenant = randomUUID();
    const contact = randomUUID();
    const fn = `test_${randomUUID().replaceAll('-', '')}`;
    // Which function wrote each Event, from inside its transaction.
    await pool.query(`create table ${fn}_calls (event_name text, query text)`);
    await pool.query(`create function ${fn}() returns trigger language plpgsql as $$
      begin
        if new.tenant_id = '${tenant}' then
          if new.event_name = 'explode' then raise exception 'test failure'; end if;
          insert into ${fn}_calls values (new.event_name, current_query());
        end if;
        return new;
      end $$`);
    await pool.query(
      `create trigger ${fn} before insert on events for each row execute function ${fn}()`,
    );
    try {
      const options = { windowMs: WINDOW_MS, wait: false, topic: TOPIC };
      const calm = await recordBatch(
        pool,
        [request(tenant, [{ contactId: contact, name: 'calm' }])],
        options,
      );
      const stormy = await recordBatch(
        pool,
        [
          request(tenant, [{ contactId: contact, dedupKey: 'kept', name: 'before' }]),
          request(tenant, [{ contactId: contact, name: 'explode' }]),
          request(tenant, [{ contactId: contact, name: 'after' }]),
        ],
        options,
      );

      expect(calm.requests.map((r) => r.status)).toEqual(['recorded']);
      expect(stormy.requests.map((r) => r.status)).toEqual(['recorded', 'failed', 'recorded']);
      expect(stormy.requests[1]).toMatchObject({ code: 'P0001' });
      const { rows } = await pool.query<{ event_name: string; query: string }>(
        `select event_name, query from ${fn}_calls order by event_name`,
      );
      expect(
        rows.map((r) => [r.event_name, /record_events_batch_at_once\(/.test(r.query)]),
      ).toEqual([
        ['after', false],
        ['before', false],
        ['calm', true],
      ]);
      const received = await pool.query<{ n: string }>(
        'select count(distinct received_at) as n from events where tenant_id = $1 and event_name <> $2',
        [tenant, 'calm'],
      );
      expect(Number(received.rows[0]!.n)).toBe(1);
    } finally {
      await pool.query(`drop trigger ${fn} on events`);
      await pool.query(`drop function ${fn}()`);
      await pool.query(`drop table ${fn}_calls`);
    }
  });
});

describe('the deadline of a recording call (batch_deadline)', () => {
  const call = (requests: BatchRequest[], notAfter: Date | null) =>
    pool.query({
      ...BATCH_STATEMENTS.atOnce,
      values: [
        ...batchValues(requests, { windowMs: WINDOW_MS, wait: false, topic: TOPIC }),
        notAfter?.toISOString() ?? null,
      ],
    });
  const stored = async (tenant: string) =>
    Number(
      (
        await pool.query<{ n: string }>('select count(*) as n from events where tenant_id = $1', [
          tenant,
        ])
      ).rows[0]!.n,
    );

  it('when a call reaches the database after its deadline, then it fails with 08000 (a 503) and writes nothing', async () => {
    const tenant = randomUUID();
    const requests = [request(tenant, [{ contactId: randomUUID(), dedupKey: 'late' }])];

    const late = call(requests, new Date(Date.now() - 1_000));

    await expect(late).rejects.toMatchObject({ code: '08000' });
    expect(await stored(tenant)).toBe(0);
    const claims = await pool.query('select 1 from dedup_claims where tenant_id = $1', [tenant]);
    expect(claims.rowCount).toBe(0);
  });

  it('when a call arrives before its deadline, or has none, then it records', async () => {
    const tenant = randomUUID();
    await call([request(tenant, [{ contactId: randomUUID() }])], new Date(Date.now() + 5_000));
    await call([request(tenant, [{ contactId: randomUUID() }])], null);
    expect(await stored(tenant)).toBe(2);
  });

  it('when recordBatch has had an answer, then it sends its calls with a deadline of the server clock', async () => {
    const tenant = randomUUID();
    const options = { windowMs: WINDOW_MS, wait: false, topic: TOPIC };
    const sent: unknown[][] = [];
    // The pool as it is, but each connection it hands out notes the values it is sent.
    const spy = new Proxy(pool, {
      get(target, prop) {
        if (prop === 'connect') {
          return async () => {
            const client = await target.connect();
            const query = client.query.bind(client) as (...args: unknown[]) => unknown;
            // For this checkout only: the connection goes back to the pool as it came.
            client.query = ((...args: unknown[]) => {
              const values = (args[0] as { values?: unknown[] } | null)?.values;
              if (values) sent.push(values);
              client.query = query as typeof client.query;
              return query(...args);
            }) as typeof client.query;
            return client;
          };
        }
        const value: unknown = Reflect.get(target, prop);
        return typeof value === 'function'
          ? (value as (...a: unknown[]) => unknown).bind(target)
          : value;
      },
    });
    for (let i = 0; i < 2; i += 1) {
      await recordBatch(spy, [request(tenant, [{ contactId: randomUUID() }])], options);
    }
    expect(await stored(tenant)).toBe(2);
    // None before the first answer; then the server's clock plus 5 s.
    expect(sent[0]?.at(-1)).toBeNull();
    const deadline = sent.at(-1)?.at(-1);
    expect(typeof deadline).toBe('string');
    expect(Math.abs(Date.parse(deadline as string) - (Date.now() + 5_000))).toBeLessThan(3_000);
  });
});
