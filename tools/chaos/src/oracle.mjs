// What the fault suite checks after a fault and its recovery, from the two places an Event
// lives: PostgreSQL (herald_events, table events) and the Kafka topic herald.events.recorded,
// read from the offsets the topic had before the fault's load began.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { consumeBatches, createKafka, partitionOffsets, setGroupOffsets } from '@herald/kafka';
import { databaseUrl, kafkaBrokers } from '@herald/stack/index.mjs';

export const EVENTS_TOPIC = 'herald.events.recorded';
/** Every Event answered 202 must be on Kafka this soon after recovery (or after its 202). */
export const PUBLISH_DEADLINE_MS = 30_000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export const eventsDatabaseUrl = () => databaseUrl('herald_events');

/** A client of the stack's Kafka, or of the node at `brokers`. */
export function kafkaClient(clientId = 'herald-chaos', brokers = kafkaBrokers) {
  return createKafka({
    brokers: brokers
      .split(',')
      .map((b) => b.trim())
      .filter(Boolean),
    clientId,
  });
}

/** The topic's end offset on every partition: [{partition, offset}]. */
export async function topicEnd(kafka, topic = EVENTS_TOPIC) {
  const admin = kafka.admin();
  try {
    const offsets = await partitionOffsets(admin, [topic]);
    return offsets.map((o) => ({ partition: o.partition, offset: o.high }));
  } finally {
    await admin.close();
  }
}

/** The Tenant's stored Events: Map dedupKey -> [{id, receivedAt}] (more than one is a double). */
export async function storedEvents(tenantId) {
  const client = new pg.Client({
    connectionString: eventsDatabaseUrl(),
    application_name: 'herald-chaos-oracle',
  });
  await client.connect();
  try {
    const { rows } = await client.query(
      'select id, dedup_key, received_at from events where tenant_id = $1',
      [tenantId],
    );
    const byKey = new Map();
    for (const row of rows) {
      const list = byKey.get(row.dedup_key) ?? [];
      list.push({ id: row.id, receivedAt: row.received_at.getTime() });
      byKey.set(row.dedup_key, list);
    }
    return { rows: rows.length, byKey };
  } finally {
    await client.end();
  }
}

/**
 * Starts reading the topic from `start` (from topicEnd) with a consumer group of its own,
 * keeping the Tenant's messages ({partition, offset, timestamp, value}, in arrival order) in
 * `messages`. Joining takes seconds: open the reader early, wait on it later.
 */
export async function openReader(kafka, tenantId, start) {
  const groupId = `herald-chaos-${randomUUID()}`;
  const admin = kafka.admin();
  const messages = [];
  const position = new Map(start.map((p) => [p.partition, BigInt(p.offset)]));
  let consumer;
  try {
    await setGroupOffsets(
      admin,
      groupId,
      start.map((p) => ({ topic: EVENTS_TOPIC, partition: p.partition, offset: BigInt(p.offset) })),
    );
    consumer = kafka.consumer({ groupId, maxWaitTime: 250, autocommit: false });
    const stream = await consumer.consume({ topics: [EVENTS_TOPIC], mode: 'committed' });
    void consumeBatches(stream, (batch) => {
      for (const message of batch) {
        position.set(message.partition, message.offset + 1n);
        if (message.value === null) continue;
        const value = JSON.parse(message.value);
        if (value.tenantId !== tenantId) continue;
        // What the oracle reads, not the whole Event: a long run keeps many.
        const { eventId, messageId, dedupKey } = value;
        messages.push({
          partition: message.partition,
          offset: String(message.offset),
          timestamp: Number(message.timestamp),
          value: { tenantId, eventId, messageId, dedupKey },
        });
      }
      return Promise.resolve();
    }).catch(() => {});
  } catch (err) {
    await consumer?.close(true).catch(() => {});
    await admin.close().catch(() => {});
    throw err;
  }
  const caughtUp = async () => {
    const end = await partitionOffsets(admin, [EVENTS_TOPIC]);
    return end.every((p) => (position.get(p.partition) ?? 0n) >= p.high);
  };
  return {
    messages,
    /**
     * Resolves once `enough(messages)` holds, or once `deadline` (ms since the epoch) has
     * passed; either way only after every partition is read up to its end (what was published
     * late is judged by its timestamp), unless that takes a minute more.
     */
    async waitFor({ enough, deadline }) {
      for (;;) {
        const done = enough(messages) || Date.now() > deadline;
        if (done && (await caughtUp())) return messages;
        if (Date.now() > deadline + 60_000) return messages;
        await sleep(250);
      }
    },
    async close() {
      await consumer.close(true).catch(() => {});
      await admin.deleteGroups({ groups: [groupId] }).catch(() => {});
      await admin.close().catch(() => {});
    },
  };
}

/** Whether every Event id of `ids` is among the messages read so far (counted as they come). */
export function allPublished(ids) {
  const missing = new Set(ids);
  let counted = 0;
  return (messages) => {
    for (; counted < messages.length; counted += 1) missing.delete(messages[counted].value.eventId);
    return missing.size === 0;
  };
}

/**
 * @typedef {import('./bookkeeping.mjs').Ledger} Ledger
 *
 * @typedef {object} Message  one the reader kept
 * @property {number} partition
 * @property {string} offset
 * @property {number} timestamp
 * @property {{tenantId?: string, eventId: string, messageId: string, dedupKey: string}} value
 *
 * @typedef {Awaited<ReturnType<typeof storedEvents>>} Stored
 * @typedef {{injectedAt: number, recoveredAt: number}} FaultSpan
 */

/**
 * When an Event recorded at `receivedAt` is due on Kafka: 30 s later, or 30 s after the
 * recovery of a fault that begins before then.
 * @param {FaultSpan[]} windows
 * @param {number} receivedAt
 */
function dueBy(windows, receivedAt) {
  let due = receivedAt + PUBLISH_DEADLINE_MS;
  for (const w of [...windows].sort((a, b) => a.injectedAt - b.injectedAt)) {
    if (w.injectedAt <= due && w.recoveredAt >= receivedAt) {
      due = Math.max(due, w.recoveredAt + PUBLISH_DEADLINE_MS);
    }
  }
  return due;
}

/**
 * Kafka, by Event id: its copies; the Event ids of each dedupKey; and the counts of copies
 * beyond the first, of those with another message id, and of messages whose id is not their
 * Event's.
 * @param {Message[]} messages
 */
function kafkaCopies(messages) {
  /** @type {Map<string, Message[]>} */
  const copies = new Map();
  /** @type {Map<string, Set<string>>} */
  const idsByKey = new Map();
  let badMessageIds = 0;
  for (const m of messages) {
    const { eventId, messageId, dedupKey } = m.value;
    if (messageId !== eventId) badMessageIds += 1;
    const list = copies.get(eventId) ?? [];
    list.push(m);
    copies.set(eventId, list);
    const ids = idsByKey.get(dedupKey) ?? new Set();
    ids.add(eventId);
    idsByKey.set(dedupKey, ids);
  }
  let kafkaDuplicates = 0;
  let duplicatesWithOtherId = 0;
  for (const list of copies.values()) {
    kafkaDuplicates += list.length - 1;
    for (const m of list.slice(1)) {
      if (m.value.messageId !== list[0].value.messageId) duplicatesWithOtherId += 1;
    }
  }
  return { copies, idsByKey, badMessageIds, kafkaDuplicates, duplicatesWithOtherId };
}

/**
 * Where each Event answered 202 went: the keys absent from PostgreSQL, never on Kafka, or on
 * Kafka after they were due, and the largest publishing lag and delay.
 * @param {Ledger} ledger
 * @param {Stored} stored
 * @param {Map<string, Message[]>} copies
 * @param {FaultSpan[]} windows
 */
function publication(ledger, stored, copies, windows) {
  const lostInPostgres = [];
  const unpublished = [];
  const late = [];
  let maxPublishLagMs = 0;
  let maxPublishDelayMs = 0;
  for (const [key, ackAt] of ledger.acked) {
    const rows = stored.byKey.get(key);
    if (!rows) {
      lostInPostgres.push(key);
      continue;
    }
    const published = rows.flatMap((r) => copies.get(r.id) ?? []);
    if (published.length === 0) {
      unpublished.push(key);
      continue;
    }
    const first = Math.min(...published.map((m) => m.timestamp));
    const receivedAt = Math.min(...rows.map((r) => r.receivedAt));
    maxPublishLagMs = Math.max(maxPublishLagMs, first - receivedAt);
    const due = Math.max(dueBy(windows, receivedAt), ackAt + PUBLISH_DEADLINE_MS);
    // How long it took counted from when it could go: its recording, or the recovery.
    maxPublishDelayMs = Math.max(maxPublishDelayMs, first - (due - PUBLISH_DEADLINE_MS));
    if (first > due) late.push(key);
  }
  return { lostInPostgres, unpublished, late, maxPublishLagMs, maxPublishDelayMs };
}

/**
 * The verdict of one fault. `windows` are the fault's [injectedAt, recoveredAt] spans. An Event
 * is due on Kafka 30 s after it was recorded; a fault that begins before then (the Event
 * recorded during it, or shortly before and not yet published) moves that to 30 s after its
 * recovery.
 * @param {{ledger: Ledger, stored: Stored, messages: Message[], windows: FaultSpan[]}} evidence
 */
export function judge({ ledger, stored, messages, windows }) {
  const { copies, idsByKey, badMessageIds, kafkaDuplicates, duplicatesWithOtherId } =
    kafkaCopies(messages);
  const { lostInPostgres, unpublished, late, maxPublishLagMs, maxPublishDelayMs } = publication(
    ledger,
    stored,
    copies,
    windows,
  );

  // Two stored Events for one key, or two Event ids on Kafka for one key.
  const doubledKeys = new Set();
  for (const [key, rows] of stored.byKey) if (rows.length > 1) doubledKeys.add(key);
  for (const [key, ids] of idsByKey) if (ids.size > 1) doubledKeys.add(key);

  // Events of requests answered 4xx: in neither place.
  const rejectedPresent = [];
  for (const key of ledger.rejected.keys()) {
    if (stored.byKey.has(key) || idsByKey.has(key)) rejectedPresent.push(key);
  }
  // On Kafka but not in PostgreSQL (and not erased: this suite erases nothing), and the other
  // way round: whatever recording committed must be published, answered 202 or not.
  const storedIds = new Set([...stored.byKey.values()].flat().map((r) => r.id));
  const publishedNotStored = [...copies.keys()].filter((id) => !storedIds.has(id)).length;
  const storedNotPublished = [...storedIds].filter((id) => !copies.has(id)).length;

  const lost = lostInPostgres.length + unpublished.length + late.length;
  return {
    acked: ledger.acked.size,
    rejected: ledger.rejected.size,
    abandoned: ledger.abandoned.size,
    uncertain: ledger.uncertain.size,
    storedRows: stored.rows,
    kafkaMessages: messages.length,
    lost,
    lostInPostgres: lostInPostgres.length,
    unpublished: unpublished.length,
    publishedLate: late.length,
    doubled: doubledKeys.size,
    kafkaDuplicates,
    duplicatesWithOtherId,
    badMessageIds,
    rejectedPresent: rejectedPresent.length,
    publishedNotStored,
    storedNotPublished,
    maxPublishLagMs,
    maxPublishDelayMs,
    examples: {
      lostInPostgres: lostInPostgres.slice(0, 5),
      unpublished: unpublished.slice(0, 5),
      late: late.slice(0, 5),
      doubled: [...doubledKeys].slice(0, 5),
      rejectedPresent: rejectedPresent.slice(0, 5),
    },
  };
}
