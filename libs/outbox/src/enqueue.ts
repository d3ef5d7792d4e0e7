import type { Queryable } from '@herald/db';
import { messageTraceHeaders } from '@herald/telemetry';

export interface OutboxMessage {
  topic: string;
  /** Decides the partition: every message with one key is published in enqueue order. */
  key: string;
  /** Serialized with JSON.stringify. `null` is a tombstone (a null Kafka value). */
  value: unknown;
  /** Whom the message is about (a Contact id), so `deletePendingFor` can find it. */
  subjectId?: string | null;
  headers?: Record<string, string>;
}

// One statement whatever the number of messages: five array parameters, never a placeholder per
// value (PostgreSQL allows at most 65,535 of those). `with ordinality ... order by` makes the
// identity values follow the array order, which is the publishing order of each key.
const INSERT_SQL = `insert into outbox (topic, key, value, headers, subject_id)
select m.topic, m.key, m.value, m.headers, m.subject_id
from unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::uuid[])
  with ordinality as m(topic, key, value, headers, subject_id, ord)
order by m.ord`;

/**
 * Writes messages to the outbox. Pass the client of the transaction that writes the domain rows:
 * the messages then exist exactly when those rows do, and the relay publishes them after the
 * commit. (With the pool, the insert commits on its own.)
 *
 * The active trace context (`messageTraceHeaders`: W3C `traceparent`, a small `tracestate`,
 * never `baggage`) is added to each message's headers, so the publish and its consumers carry
 * on the trace of the request that caused it (or link to it, for a batch shared by several
 * traces); a header the caller sets wins over an injected one.
 */
export async function enqueue(
  client: Queryable,
  messages: readonly OutboxMessage[],
): Promise<void> {
  if (messages.length === 0) return;
  const injected = messageTraceHeaders();

  const topics: string[] = [];
  const keys: string[] = [];
  const values: (string | null)[] = [];
  const headers: string[] = [];
  const subjects: (string | null)[] = [];
  for (const [index, message] of messages.entries()) {
    topics.push(message.topic);
    keys.push(message.key);
    values.push(serializeValue(message.value, index));
    headers.push(JSON.stringify({ ...injected, ...checkHeaders(message.headers, index) }));
    subjects.push(message.subjectId ?? null);
  }
  await client.query(INSERT_SQL, [topics, keys, values, headers, subjects]);
}

/**
 * Deletes the messages about one subject that are not published yet, for an erasure; returns
 * how many. Call it in the erasure's transaction before enqueueing the erasure's own messages
 * (or give those no subjectId). A batch the relay is sending at that moment may still reach
 * Kafka: that is why an erasure also publishes a tombstone.
 */
export async function deletePendingFor(client: Queryable, subjectId: string): Promise<number> {
  const result = await client.query('delete from outbox where subject_id = $1', [subjectId]);
  return result.rowCount ?? 0;
}

/**
 * Deletes up to `limit` unsent messages about a Tenant: those whose value's top-level `tenantId`
 * is its id (every Herald message carries one; tombstones, with no value, are left to be
 * published). Returns how many it deleted: fewer than `limit` means none is left. For a Tenant's
 * deletion, which calls it until then, so that no message about the Tenant is published after
 * its data is gone. A scan of the outbox: it holds what is not yet published, normally little.
 */
export async function deletePendingOfTenant(
  client: Queryable,
  tenantId: string,
  limit: number,
): Promise<number> {
  // jsonb reads the value unless it holds the escape \u0000, which no PostgreSQL JSON function
  // accepts; such a value (a NUL a caller sent) is matched on its first "tenantId", which every
  // Herald message writes before any field a caller fills.
  const result = await client.query(
    `delete from outbox where id in (
       select id from outbox
       where strpos(value, $1) > 0
         and case when strpos(value, '\\u0000') = 0 then value::jsonb ->> 'tenantId'
                  else substring(value from '"tenantId":"([^"]*)"') end = $1
       limit $2)`,
    [tenantId, limit],
  );
  return result.rowCount ?? 0;
}

function serializeValue(value: unknown, index: number): string | null {
  if (value === null) return null;
  const json: unknown = JSON.stringify(value);
  if (typeof json !== 'string') {
    throw new TypeError(
      `outbox message ${index} has a value JSON cannot represent (use null for a tombstone)`,
    );
  }
  return json;
}

function checkHeaders(
  headers: Record<string, string> | undefined,
  index: number,
): Record<string, string> {
  if (headers === undefined) return {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string') {
      throw new TypeError(`outbox message ${index}: header ${name} must be a string`);
    }
  }
  return headers;
}
