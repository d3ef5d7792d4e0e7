import { withTransaction, type Pool, type Queryable } from '@herald/db';
import { isUuid, type Logger } from '@herald/http';
import type { Consumer, Kafka } from '@herald/kafka';
import { contactChangedMessage, contactErasedMessage, TOPICS } from '@herald/messages';
import {
  contactIdentitiesGroupId,
  eraseContactIdentity,
  eraseContactIdentityById,
  upsertContactIdentities,
  type ContactIdentitySnapshot,
} from './data/contact-identities.js';

/** The topics the projection is fed by, both keyed by Contact id. */
export const CONTACT_IDENTITY_TOPICS = [TOPICS.contactsChanged, TOPICS.contactsErased] as const;

type EachBatchPayload = Parameters<
  NonNullable<NonNullable<Parameters<Consumer['run']>[0]>['eachBatch']>
>[0];

/** One message as Kafka delivered it. */
export interface ContactIdentityMessage {
  topic: string;
  key: string | null;
  /** The raw value; null is a compaction tombstone. */
  value: string | null;
}

/** What one message asks of the projection. */
type IdentityChange =
  | { kind: 'snapshot'; snapshot: ContactIdentitySnapshot }
  | { kind: 'erased'; tenantId: string; contactId: string }
  /** The erasure's compaction tombstone on the changed topic: the Contact by id alone. */
  | { kind: 'tombstone'; contactId: string }
  | { kind: 'skip'; reason: string };

function changeOf(message: ContactIdentityMessage): IdentityChange {
  const skip = (reason: string): IdentityChange => ({ kind: 'skip', reason });
  if (message.topic === TOPICS.contactsChanged && message.value === null) {
    if (message.key === null || !isUuid(message.key)) return skip('tombstone without a uuid key');
    return { kind: 'tombstone', contactId: message.key };
  }
  let json: unknown;
  try {
    json = JSON.parse(message.value ?? 'null');
  } catch {
    return skip('not JSON');
  }
  if (message.topic === TOPICS.contactsChanged) {
    const parsed = contactChangedMessage.safeParse(json);
    if (!parsed.success) return skip('not a contact changed message');
    const { tenantId, contact } = parsed.data;
    return {
      kind: 'snapshot',
      snapshot: {
        tenantId,
        contactId: contact.id,
        externalId: contact.externalId ?? null,
        updatedAt: contact.updatedAt,
      },
    };
  }
  if (message.topic === TOPICS.contactsErased) {
    const parsed = contactErasedMessage.safeParse(json);
    if (!parsed.success) return skip('not a contact erased message');
    return { kind: 'erased', tenantId: parsed.data.tenantId, contactId: parsed.data.contactId };
  }
  return skip('unexpected topic');
}

/**
 * Applies messages to the projection, in their order; idempotent, and any order of one Contact's
 * messages ends in the same state (see the data functions). Snapshots in a row go as one
 * statement, up to the first that names a Contact already among them; an erasure goes alone,
 * after the snapshots before it. A message that is not what its topic's schema says is skipped
 * and reported: it can never be applied, so retrying it would stop the partition for good.
 */
export async function applyContactIdentityMessages(
  db: Queryable,
  messages: readonly ContactIdentityMessage[],
  logger?: Logger,
): Promise<void> {
  let snapshots: ContactIdentitySnapshot[] = [];
  const named = new Set<string>();
  const flush = async () => {
    await upsertContactIdentities(db, snapshots);
    snapshots = [];
    named.clear();
  };
  for (const message of messages) {
    const change = changeOf(message);
    switch (change.kind) {
      case 'skip':
        logger?.warn(
          { topic: message.topic, reason: change.reason },
          'contact identity message skipped',
        );
        break;
      case 'snapshot': {
        const { tenantId, contactId } = change.snapshot;
        const key = `${tenantId}:${contactId}`.toLowerCase();
        if (named.has(key)) await flush();
        snapshots.push(change.snapshot);
        named.add(key);
        break;
      }
      case 'erased':
        await flush();
        await eraseContactIdentity(db, change.tenantId, change.contactId);
        break;
      case 'tombstone':
        await flush();
        await eraseContactIdentityById(db, change.contactId);
        break;
    }
  }
  await flush();
}

/** The longest shutdown waits for the consumer to leave its group. */
const STOP_WAIT_MS = 5_000;

export interface ContactIdentitiesConsumer {
  /** Its consumer group, once read from the database. */
  groupId(): string | undefined;
  /** Messages not yet applied, over every partition of both topics (the group's committed offsets). */
  lag(): Promise<number>;
  stop(): Promise<void>;
}

export interface ContactIdentitiesConsumerOptions {
  pool: Pool;
  kafka: Kafka;
  logger: Logger;
  /** Default: this database's group (contact_identities_consumer). */
  groupId?: string;
  /** How long to wait before starting again after a failure. Default 5 s. */
  restartDelayMs?: number;
}

/**
 * Keeps contact_identities up to date from the contacts service's topics. A new group starts at
 * the topics' beginning, so a new database fills up. Nothing here is fatal: Kafka or the
 * database away at start (or later), it starts again after a pause, until stopped; meanwhile
 * recording asks the contacts service.
 */
export function startContactIdentitiesConsumer(
  options: ContactIdentitiesConsumerOptions,
): ContactIdentitiesConsumer {
  const { pool, kafka, logger } = options;
  const restartDelayMs = options.restartDelayMs ?? 5_000;
  let groupId = options.groupId;
  let consumer: Consumer | undefined;
  let starting: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const eachBatch = async (payload: EachBatchPayload) => {
    const { batch } = payload;
    // After stop the pool may be gone: nothing is applied (or committed), the next owner reads it.
    if (stopped || batch.messages.length === 0 || !payload.isRunning()) return;
    // One transaction per batch: in partition order, all applied or none (then retried).
    await withTransaction(pool, (client) =>
      applyContactIdentityMessages(
        client,
        batch.messages.map((m) => ({
          topic: batch.topic,
          key: m.key === null ? null : m.key.toString('utf8'),
          value: m.value === null ? null : m.value.toString('utf8'),
        })),
        logger,
      ),
    );
    payload.resolveOffset(batch.lastOffset());
    await payload.heartbeat();
  };

  const restartLater = () => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(() => void start(), restartDelayMs);
  };

  const start = (): Promise<void> =>
    (starting = (async () => {
      try {
        groupId ??= await contactIdentitiesGroupId(pool);
        // Short timeouts: a member that went away without leaving (a killed replica, a stop during
        // a join) holds up the next join only this long.
        const next = kafka.consumer({
          groupId,
          maxWaitTimeInMs: 500,
          sessionTimeout: 10_000,
          rebalanceTimeout: 10_000,
          heartbeatInterval: 1_000,
          // kafkajs restarts itself after a retriable failure, never once stopped.
          retry: { restartOnFailure: () => Promise.resolve(!stopped) },
        });
        consumer = next;
        // kafkajs starts again by itself after a retriable failure; any other ends it here.
        next.on(next.events.CRASH, ({ payload }) => {
          if (stopped) return void next.disconnect().catch(() => {});
          if (payload.restart) return;
          logger.warn({ err: payload.error }, 'contact identity consumer stopped; starting again');
          void next.disconnect().catch(() => {});
          restartLater();
        });
        await next.connect();
        if (stopped) return;
        await next.subscribe({ topics: [...CONTACT_IDENTITY_TOPICS], fromBeginning: true });
        await next.run({ eachBatch, eachBatchAutoResolve: false });
      } catch (err) {
        if (stopped) return;
        logger.warn({ err }, 'contact identity consumer could not start; trying again later');
        await consumer?.disconnect().catch(() => {});
        restartLater();
      }
    })());

  void start();

  return {
    groupId: () => groupId,
    async lag() {
      if (groupId === undefined) throw new Error('the consumer group is not known yet');
      const admin = kafka.admin();
      await admin.connect();
      try {
        let behind = 0;
        const committed = await admin.fetchOffsets({
          groupId,
          topics: [...CONTACT_IDENTITY_TOPICS],
        });
        for (const { topic, partitions } of committed) {
          const ends = await admin.fetchTopicOffsets(topic);
          for (const end of ends) {
            const done = partitions.find((p) => p.partition === end.partition)?.offset ?? '-1';
            const from = Number(done) < 0 ? Number(end.low) : Number(done);
            behind += Math.max(0, Number(end.high) - from);
          }
        }
        return behind;
      } finally {
        await admin.disconnect();
      }
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      // Leaving the group waits for a join in flight, which a broker may hold for a while:
      // shutdown waits a bounded time; nothing is applied after this anyway.
      const bound = new Promise((resolve) => setTimeout(resolve, STOP_WAIT_MS).unref());
      await Promise.race([
        (async () => {
          await consumer?.disconnect().catch(() => {});
          await starting;
          // A start that got past the first disconnect.
          await consumer?.disconnect().catch(() => {});
        })(),
        bound,
      ]);
    },
  };
}
