import { withTransaction, type Pool, type Queryable } from '@herald/db';
import { isUuid, type Logger } from '@herald/http';
import {
  consumeBatches,
  groupLag,
  type ConsumedMessage,
  type Consumer,
  type Kafka,
} from '@herald/kafka';
import { contactChangedMessage, contactErasedMessage, TOPICS } from '@herald/messages';
import { withConsumedBatchSpan } from '@herald/telemetry';
import {
  contactIdentitiesGroupId,
  eraseContactIdentity,
  eraseContactIdentityById,
  upsertContactIdentities,
  type ContactIdentitySnapshot,
} from './data/contact-identities.js';

/** The topics the projection is fed by, both keyed by Contact id. */
export const CONTACT_IDENTITY_TOPICS = [TOPICS.contactsChanged, TOPICS.contactsErased] as const;

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

/** Commits the message's offset (and so every one before it in its partition). */
const commit = (message: ConsumedMessage) =>
  new Promise<void>((resolve, reject) => {
    void message.commit((err) => (err ? reject(err) : resolve()));
  });

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
 *
 * At least once: the messages the consumer holds are applied in one transaction, and only then
 * are their offsets committed; any failure (the database, a commit, the group, a fetch) closes
 * the consumer and a new one starts again from the committed offsets. Applying is idempotent, so
 * what is read again does no harm.
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

  const applyBatch = async (messages: ConsumedMessage[]) => {
    // After stop the pool may be gone: nothing is applied (or committed), the next owner reads it.
    if (stopped || messages.length === 0) return;
    // One transaction: each partition's messages in order, all applied or none (then read again).
    // Traced when a message comes from a sampled request: a span linked to each such request.
    await withConsumedBatchSpan(
      '@herald/events',
      'process contact identities',
      messages.map((m) => m.headers),
      {
        'messaging.system': 'kafka',
        'messaging.operation.type': 'process',
        'messaging.operation.name': 'process',
        'messaging.consumer.group.name': groupId ?? '',
      },
      () =>
        withTransaction(pool, (client) =>
          applyContactIdentityMessages(
            client,
            messages.map((m) => ({ topic: m.topic, key: m.key, value: m.value })),
            logger,
          ),
        ),
    );
    // Each partition's last message commits everything before it too.
    const last = new Map<string, ConsumedMessage>();
    for (const m of messages) last.set(`${m.topic}:${m.partition}`, m);
    await Promise.all([...last.values()].map(commit));
  };

  const restartLater = () => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(() => void start(), restartDelayMs);
  };

  const start = (): Promise<void> =>
    (starting = (async () => {
      let next: Consumer | undefined;
      try {
        groupId ??= await contactIdentitiesGroupId(pool);
        if (stopped) return;
        // Short timeouts: a member that went away without leaving (a killed replica, a stop during
        // a join) holds up the next join only this long.
        next = kafka.consumer({
          groupId,
          autocommit: false,
          maxWaitTime: 500,
          sessionTimeout: 10_000,
          rebalanceTimeout: 10_000,
          heartbeatInterval: 1_000,
        });
        consumer = next;
        const stream = await next.consume({
          topics: [...CONTACT_IDENTITY_TOPICS],
          mode: 'committed',
          fallbackMode: 'earliest',
        });
        if (stopped) return void (await next.close(true).catch(() => {}));
        const running = next;
        void consumeBatches(stream, applyBatch).then(
          () => {
            if (stopped) return;
            logger.warn('contact identity consumer ended; starting again');
            void running.close(true).catch(() => {});
            restartLater();
          },
          (err: unknown) => {
            if (stopped) return;
            logger.warn({ err }, 'contact identity consumer stopped; starting again');
            void running.close(true).catch(() => {});
            restartLater();
          },
        );
      } catch (err) {
        if (stopped) return;
        logger.warn({ err }, 'contact identity consumer could not start; trying again later');
        await next?.close(true).catch(() => {});
        restartLater();
      }
    })());

  void start();

  return {
    groupId: () => groupId,
    async lag() {
      if (groupId === undefined) throw new Error('the consumer group is not known yet');
      const admin = kafka.admin();
      try {
        return await groupLag(admin, groupId, CONTACT_IDENTITY_TOPICS);
      } finally {
        await admin.close();
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
          await consumer?.close(true).catch(() => {});
          await starting;
          // A start that got past the first close.
          await consumer?.close(true).catch(() => {});
        })(),
        bound,
      ]);
    },
  };
}
