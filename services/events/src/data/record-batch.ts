import { RETRYABLE, postgresTimestamp, sqlState, withStatement, type Pool } from '@herald/db';
import type { Link } from '@herald/telemetry';
import type { NewEvent } from './events-repository.js';

/** One Event of a request, ready to be written with its outbox message. */
export interface BatchEvent {
  row: NewEvent;
  /** hashDedupKey of its dedupKey (null without one): what its claim holds. */
  dedupKeyHash: string | null;
  /** Its outbox message's key. */
  messageKey: string;
  /**
   * Its outbox message's value (JSON) without what the recording transaction adds: the
   * receivedAt, which only it knows, and the properties, which it has already in the row.
   * value = head + receivedAt + tail + (row.properties ?? 'null') + '}'.
   */
  messageHead: string;
  messageTail: string;
}

/** One request's transaction, as the batch functions take it (migrations 006 and 007). */
export interface BatchRequest {
  tenantId: string;
  /** contactLockKey of each Contact its Events to record name: distinct, sorted. */
  lockKeys: readonly string[];
  /** Every Contact the request names (distinct), and whether an Event to record names it. */
  contacts: readonly { contactId: string; candidate: boolean }[];
  /** Its dedup claims, sorted by hash, so two requests sharing keys take them in one order. */
  claims: readonly { dedupKeyHash: string; eventId: string }[];
  events: readonly BatchEvent[];
  /** Its outbox messages' headers (JSON): the request's trace context, as enqueue adds it. */
  headers: string;
}

export type RequestResult =
  /** `lost`: the ids of its Events not written because their dedupKey's claim is another's. */
  | { status: 'recorded'; lost: ReadonlySet<string>; receivedAt: Date }
  | { status: 'refused'; erased: ReadonlySet<string> }
  /** A Contact's lock was taken (an erasure): the request must run alone, waiting for it. */
  | { status: 'busy' }
  | { status: 'failed'; code: string; message: string };

export interface BatchResult {
  /** One per request, in order. */
  requests: RequestResult[];
  /** What was left of the window of the claims won, when the work was done (ms). */
  remainingMs: number;
}

interface ResultRow {
  o_status: 'recorded' | 'refused' | 'busy' | 'failed' | 'done';
  o_erased: string[] | null;
  o_lost: string[] | null;
  o_code: string | null;
  o_message: string | null;
  o_received_at: Date;
  o_remaining_ms: number | null;
}

// Values that never hold a control character (ids, hashes, timestamps, the output of
// JSON.stringify) go as one text per array, joined by chr(1) with chr(2) for null, and
// string_to_array splits them: no quoting and escaping of every element on either side, which was
// most of what node-postgres spent on a 1,000-Event request's arrays. Caller-given strings (names,
// dedupKeys, external ids) go as arrays.
const SEPARATOR = '\u0001';
const NULL_MARK = '\u0002';

function joined(values: readonly (string | null)[]): string {
  let text = '';
  for (let i = 0; i < values.length; i += 1) {
    const value = values[i] ?? NULL_MARK;
    // Never true for what is passed here; if it ever were, Events would be cut apart wrongly.
    const bad =
      value.length === 0 ||
      (value !== NULL_MARK && (value.includes(SEPARATOR) || value.includes(NULL_MARK)));
    if (bad) {
      throw new Error('a joined value is empty or holds a separator');
    }
    if (i > 0) text += SEPARATOR;
    text += value;
  }
  return text;
}

const split = (param: string, type: string) =>
  `string_to_array(${param}::text, chr(1), chr(2))::${type}[]`;

const call = (fn: string) =>
  `select * from ${fn}($1::float8, $2::boolean, $3::text, $4::int4[],
    $5::int4[], $6::uuid[], $7::jsonb[], $8::int4[], $9::int4[], $10::int4[], $11::int4[],
    $12::bigint[], ${split('$13', 'uuid')}, $14::boolean[], ${split('$15', 'text')},
    ${split('$16', 'uuid')}, ${split('$17', 'uuid')}, ${split('$18', 'uuid')}, $19::text[],
    $20::text[], ${split('$21', 'timestamptz')}, $22::text[], ${split('$23', 'text')},
    $24::text[], ${split('$25', 'text')}, ${split('$26', 'text')})`;

/**
 * The two batch functions, same arguments and same answer, as named statements: each connection
 * parses and plans a call once, then only binds it.
 */
export const BATCH_STATEMENTS = {
  /** The whole batch in a few statements, no subtransaction per request (migration 007). */
  atOnce: {
    name: 'events.record_events_batch_at_once.1',
    text: call('record_events_batch_at_once'),
  },
  /**
   * Each request in its own subtransaction (migration 006): after the call at once failed, it
   * finds the request that fails and records the others, in one transaction still.
   */
  eachApart: { name: 'events.record_events_batch.3', text: call('record_events_batch') },
};

/**
 * Failures that are the batch's, not one request's: record_events_batch raises them too (Node
 * runs the batch again, or answers as for one request), so running it after them is no use.
 */
function failsAnyBatch(code: string): boolean {
  return (
    code === RETRYABLE.deadlock ||
    code === RETRYABLE.serializationFailure ||
    ['53', '57', '58', 'XX'].includes(code.slice(0, 2))
  );
}

/**
 * The advisory lock of a dedupKey in its Tenant, as two int4 (their own lock space, apart from
 * the Contacts' bigint keys): the first 64 bits of its hash, mixed with the Tenant's.
 */
function dedupKeyLock(tenantBits: readonly [number, number], hash: string): [number, number] {
  return [
    Number.parseInt(hash.slice(0, 8), 16) ^ tenantBits[0],
    Number.parseInt(hash.slice(8, 16), 16) ^ tenantBits[1],
  ];
}

function batchKeyLocks(requests: readonly BatchRequest[]): [number[], number[]] {
  const locks = new Map<string, [number, number]>();
  for (const request of requests) {
    if (request.claims.length === 0) continue;
    const hex = request.tenantId.replaceAll('-', '');
    const tenantBits: [number, number] = [
      Number.parseInt(hex.slice(0, 8), 16) | 0,
      Number.parseInt(hex.slice(8, 16), 16) | 0,
    ];
    for (const { dedupKeyHash } of request.claims) {
      const lock = dedupKeyLock(tenantBits, dedupKeyHash);
      locks.set(`${lock[0]}:${lock[1]}`, lock);
    }
  }
  const sorted = [...locks.values()].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return [sorted.map((l) => l[0]), sorted.map((l) => l[1])];
}

/** The batch functions' arguments, in order, for either statement of BATCH_STATEMENTS. */
export function batchValues(
  requests: readonly BatchRequest[],
  options: { windowMs: number; wait: boolean; topic: string },
): unknown[] {
  const [keyHi, keyLo] = batchKeyLocks(requests);
  const l: string[] = [];
  const cContact: string[] = [];
  const cCandidate: boolean[] = [];
  const kHash: string[] = [];
  const kEvent: string[] = [];
  const e = {
    id: [] as string[],
    contact: [] as (string | null)[],
    org: [] as (string | null)[],
    name: [] as string[],
    occurred: [] as string[],
    dedup: [] as (string | null)[],
    properties: [] as (string | null)[],
    msgKey: [] as string[],
    msgHead: [] as string[],
    msgTail: [] as string[],
  };
  for (const request of requests) {
    l.push(...request.lockKeys);
    for (const c of request.contacts) {
      cContact.push(c.contactId);
      cCandidate.push(c.candidate);
    }
    for (const c of request.claims) {
      kHash.push(c.dedupKeyHash);
      kEvent.push(c.eventId);
    }
    for (const { row, messageKey, messageHead, messageTail } of request.events) {
      e.id.push(row.id);
      e.contact.push(row.contactId);
      e.org.push(row.organizationExternalId);
      e.name.push(row.eventName);
      e.occurred.push(postgresTimestamp(row.occurredAt));
      e.dedup.push(row.dedupKey);
      e.properties.push(row.properties);
      e.msgKey.push(messageKey);
      e.msgHead.push(messageHead);
      e.msgTail.push(messageTail);
    }
  }
  return [
    options.windowMs / 1000,
    options.wait,
    options.topic,
    keyHi,
    keyLo,
    requests.map((r) => r.tenantId),
    requests.map((r) => r.headers),
    requests.map((r) => r.lockKeys.length),
    requests.map((r) => r.contacts.length),
    requests.map((r) => r.claims.length),
    requests.map((r) => r.events.length),
    l,
    joined(cContact),
    cCandidate,
    joined(kHash),
    joined(kEvent),
    joined(e.id),
    joined(e.contact),
    e.org,
    e.name,
    joined(e.occurred),
    e.dedup,
    joined(e.properties),
    e.msgKey,
    joined(e.msgHead),
    joined(e.msgTail),
  ];
}

/**
 * Writes the transactions of several requests in one call and one transaction, each all or
 * nothing whatever its neighbours do: the whole batch at once, and only when that fails, each
 * request in its own subtransaction, so that the failing one fails alone. `wait`: wait for the
 * Contacts' locks (a request run alone) instead of answering 'busy'. `links`: the sampled
 * requests' spans, which its `db.transaction` span links to. Throws when the whole batch failed
 * (nothing of it was written): a timeout, a deadlock, a lost connection.
 */
export async function recordBatch(
  pool: Pool,
  requests: readonly BatchRequest[],
  options: { windowMs: number; wait: boolean; topic: string; links?: Link[] | undefined },
): Promise<BatchResult> {
  const values = batchValues(requests, options);
  const run = (statement: { name: string; text: string }) =>
    withStatement(pool, (client) => client.query<ResultRow>({ ...statement, values }), {
      links: options.links,
    });
  // A failure of the call at once wrote nothing: the same batch then runs request by request.
  const { rows } = await run(BATCH_STATEMENTS.atOnce).catch((err: unknown) => {
    const code = sqlState(err);
    if (code === undefined || failsAnyBatch(code)) throw err;
    return run(BATCH_STATEMENTS.eachApart);
  });
  const done = rows[rows.length - 1];
  if (done?.o_status !== 'done' || rows.length !== requests.length + 1) {
    throw new Error('record_events_batch answered an unexpected result');
  }
  return {
    remainingMs: done.o_remaining_ms ?? 0,
    requests: rows.slice(0, -1).map((row): RequestResult => {
      switch (row.o_status) {
        case 'recorded':
          return { status: 'recorded', lost: new Set(row.o_lost), receivedAt: row.o_received_at };
        case 'refused':
          return { status: 'refused', erased: new Set(row.o_erased) };
        case 'busy':
          return { status: 'busy' };
        default:
          return { status: 'failed', code: row.o_code ?? 'XX000', message: row.o_message ?? '' };
      }
    }),
  };
}
