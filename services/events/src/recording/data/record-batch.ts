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
   * Its outbox message's value (JSON), made with RECEIVED_AT_PLACEHOLDER as its receivedAt and
   * `"properties":null` as its last member: the transaction puts in both (see messageParts).
   */
  messageValue: string;
}

/**
 * An Event's outbox message is written by the recording transaction, which alone knows the
 * Event's receivedAt (its now()) and already has the Event's properties as JSON text in the row;
 * sending them again would double the largest part of a request. So the value is made in Node
 * with this placeholder receivedAt and null properties last, cut around both (messageParts), and
 * the functions write head || receivedAt || tail || properties || '}'.
 */
export const RECEIVED_AT_PLACEHOLDER = new Date(0);
const RECEIVED_AT_KEY = '"receivedAt":"';
const RECEIVED_AT = `${RECEIVED_AT_KEY}${RECEIVED_AT_PLACEHOLDER.toISOString()}"`;
const NO_PROPERTIES = 'null}';

/**
 * A message value's head (up to the receivedAt's opening quote) and tail (from its closing quote
 * to the properties' value). The placeholder is found by its key and quotes: that can only be the
 * top-level member, since a quote inside a JSON string is always escaped.
 */
function messageParts(value: string): [head: string, tail: string] {
  const at = value.indexOf(RECEIVED_AT);
  if (at < 0 || !value.endsWith(NO_PROPERTIES)) {
    throw new Error(
      'a message value not made with RECEIVED_AT_PLACEHOLDER and null properties last',
    );
  }
  return [
    value.slice(0, at + RECEIVED_AT_KEY.length),
    value.slice(at + RECEIVED_AT.length - 1, -NO_PROPERTIES.length),
  ];
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

/**
 * The batch functions' parameters, in order, as src/sql/functions.sql declares them (a test
 * holds the two together): the call's text and batchValues both follow this list. `joined`: sent
 * as one text (see joined) and split by PostgreSQL.
 */
export const BATCH_PARAMETERS = [
  { name: 'p_window_secs', type: 'float8' },
  { name: 'p_wait', type: 'boolean' },
  { name: 'p_topic', type: 'text' },
  { name: 'p_key_hi', type: 'int4[]' },
  { name: 'p_key_lo', type: 'int4[]' },
  { name: 'r_tenant', type: 'uuid[]' },
  { name: 'r_headers', type: 'jsonb[]' },
  { name: 'r_locks', type: 'int4[]' },
  { name: 'r_contacts', type: 'int4[]' },
  { name: 'r_claims', type: 'int4[]' },
  { name: 'r_events', type: 'int4[]' },
  { name: 'l_key', type: 'bigint[]' },
  { name: 'c_contact', type: 'uuid[]', joined: true },
  { name: 'c_candidate', type: 'boolean[]' },
  { name: 'k_hash', type: 'text[]', joined: true },
  { name: 'k_event', type: 'uuid[]', joined: true },
  { name: 'e_id', type: 'uuid[]', joined: true },
  { name: 'e_contact', type: 'uuid[]', joined: true },
  { name: 'e_org', type: 'text[]' },
  { name: 'e_name', type: 'text[]' },
  { name: 'e_occurred', type: 'timestamptz[]', joined: true },
  { name: 'e_dedup', type: 'text[]' },
  { name: 'e_properties', type: 'text[]', joined: true },
  { name: 'e_msg_key', type: 'text[]' },
  { name: 'e_msg_head', type: 'text[]', joined: true },
  { name: 'e_msg_tail', type: 'text[]', joined: true },
] as const satisfies readonly { name: string; type: string; joined?: true }[];

type BatchParameter = (typeof BATCH_PARAMETERS)[number]['name'];

/**
 * A call of `fn` that first checks its deadline (batch_deadline, migration 022, the parameter
 * after BATCH_PARAMETERS): the batch's first argument is made to depend on the check's result, so
 * the check runs before the batch, and a call that arrives late records nothing.
 */
const call = (fn: string) =>
  `select b.* from batch_deadline($${BATCH_PARAMETERS.length + 1}::timestamptz) as d(zero), ` +
  `lateral ${fn}(${BATCH_PARAMETERS.map((p, i) => {
    const value =
      'joined' in p
        ? `string_to_array($${i + 1}::text, chr(1), chr(2))::${p.type}`
        : `$${i + 1}::${p.type}`;
    return i === 0 ? `${value} + d.zero` : value;
  }).join(', ')}) as b`;

/**
 * The two batch functions, same arguments and same answer, as named statements: each connection
 * parses and plans a call once, then only binds it.
 */
export const BATCH_STATEMENTS = {
  /** The whole batch in a few statements, no subtransaction per request (migration 007). */
  atOnce: {
    name: 'events.record_events_batch_at_once.2',
    text: call('record_events_batch_at_once'),
  },
  /**
   * Each request in its own subtransaction (migration 006): after the call at once failed, it
   * finds the request that fails and records the others, in one transaction still.
   */
  eachApart: { name: 'events.record_events_batch.4', text: call('record_events_batch') },
};

/**
 * How late a recording call may reach the database: well inside the dedup window (60 s), so
 * that every copy of a request resent within the window is written within it, or not at all.
 */
export const BATCH_DELIVERY_DEADLINE_MS = 5_000;

/**
 * The database server's clock as seen from here: each call's answer says when its transaction
 * began on the server (now()), which is this process's send time plus the server's offset plus
 * the time on the way. The smallest of the recent samples is the offset (with the quickest way
 * there); a delayed answer only makes a sample larger. No estimate before the first answer.
 */
export class ServerClock {
  private readonly samples: number[] = [];

  note(sentAtMs: number, serverNow: Date): void {
    this.samples.push(serverNow.getTime() - sentAtMs);
    if (this.samples.length > 64) this.samples.shift();
  }

  /** The server's time when this process's clock reads `localMs`, or null before any answer. */
  serverTime(localMs: number): Date | null {
    if (this.samples.length === 0) return null;
    return new Date(localMs + Math.min(...this.samples));
  }
}

const clocks = new WeakMap<Pool, ServerClock>();
function clockOf(pool: Pool): ServerClock {
  let clock = clocks.get(pool);
  if (!clock) {
    clock = new ServerClock();
    clocks.set(pool, clock);
  }
  return clock;
}

/**
 * Failures that are the batch's, not one request's: record_events_batch raises them too (Node
 * runs the batch again, or answers as for one request), so running it after them is no use.
 */
function failsAnyBatch(code: string): boolean {
  return (
    code === RETRYABLE.deadlock ||
    code === RETRYABLE.serializationFailure ||
    ['08', '53', '57', '58', 'XX'].includes(code.slice(0, 2))
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
    for (const { row, messageKey, messageValue } of request.events) {
      const [head, tail] = messageParts(messageValue);
      e.id.push(row.id);
      e.contact.push(row.contactId);
      e.org.push(row.organizationExternalId);
      e.name.push(row.eventName);
      e.occurred.push(postgresTimestamp(row.occurredAt));
      e.dedup.push(row.dedupKey);
      e.properties.push(row.properties);
      e.msgKey.push(messageKey);
      e.msgHead.push(head);
      e.msgTail.push(tail);
    }
  }
  const values: Record<BatchParameter, unknown> = {
    p_window_secs: options.windowMs / 1000,
    p_wait: options.wait,
    p_topic: options.topic,
    p_key_hi: keyHi,
    p_key_lo: keyLo,
    r_tenant: requests.map((r) => r.tenantId),
    r_headers: requests.map((r) => r.headers),
    r_locks: requests.map((r) => r.lockKeys.length),
    r_contacts: requests.map((r) => r.contacts.length),
    r_claims: requests.map((r) => r.claims.length),
    r_events: requests.map((r) => r.events.length),
    l_key: l,
    c_contact: cContact,
    c_candidate: cCandidate,
    k_hash: kHash,
    k_event: kEvent,
    e_id: e.id,
    e_contact: e.contact,
    e_org: e.org,
    e_name: e.name,
    e_occurred: e.occurred,
    e_dedup: e.dedup,
    e_properties: e.properties,
    e_msg_key: e.msgKey,
    e_msg_head: e.msgHead,
    e_msg_tail: e.msgTail,
  };
  return BATCH_PARAMETERS.map((p) =>
    'joined' in p ? joined(values[p.name] as (string | null)[]) : values[p.name],
  );
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
  const clock = clockOf(pool);
  const batch = batchValues(requests, options);
  let sentAt = 0;
  const run = (statement: { name: string; text: string }) =>
    withStatement(
      pool,
      (client) => {
        sentAt = Date.now();
        const notAfter = clock.serverTime(sentAt + BATCH_DELIVERY_DEADLINE_MS);
        const values = [...batch, notAfter && postgresTimestamp(notAfter)];
        return client.query<ResultRow>({ ...statement, values });
      },
      { links: options.links },
    );
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
  clock.note(sentAt, done.o_received_at);
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
