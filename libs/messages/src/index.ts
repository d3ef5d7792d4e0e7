import { z } from 'zod';

/**
 * Every Kafka topic Herald publishes, with the schema of its messages. Consumers (Journeys)
 * code against this file; a breaking change is a new `version`, published beside the old one.
 *
 * Keys: a message's key decides its partition, so every message about one Contact (or one
 * organization) stays in order.
 */
export const TOPICS = {
  /**
   * Contact created or updated: the whole Contact. Log-compacted and keyed by Contact id, so
   * the latest state of every Contact stays readable; an erasure writes a tombstone (null
   * value) here, and compaction then drops the personal data.
   */
  contactsChanged: 'herald.contacts.changed',
  /** Contact erased: the id only, never personal data. Keyed by Contact id. */
  contactsErased: 'herald.contacts.erased',
  /**
   * Event recorded: what Journeys listen to. Keyed by `<tenantId>:contact:<contactId>`, or
   * `<tenantId>:organization:<externalId>` for an organization Event, so all Events of one
   * Contact (or organization) stay in order in one partition.
   */
  eventsRecorded: 'herald.events.recorded',
  /**
   * A Tenant's subscription state changed (a failed payment counted, suspended, reactivated).
   * Log-compacted and keyed by Tenant id, so the latest state of every Tenant stays readable.
   */
  subscriptionsChanged: 'herald.subscriptions.changed',
  /**
   * A Tenant was deleted, everything it held with it (docs/operations.md#offboarding-a-tenant):
   * consumers drop what they keep of it. Ids only; keyed by Tenant id.
   */
  tenantsDeleted: 'herald.tenants.deleted',
} as const;

export type Topic = (typeof TOPICS)[keyof typeof TOPICS];

/** Partitions and settings the local stack and the Helm chart create the topics with. */
export const TOPIC_SETTINGS: Record<Topic, { partitions: number; config: Record<string, string> }> =
  {
    [TOPICS.contactsChanged]: { partitions: 6, config: { 'cleanup.policy': 'compact' } },
    [TOPICS.contactsErased]: { partitions: 6, config: { 'cleanup.policy': 'delete' } },
    [TOPICS.eventsRecorded]: { partitions: 12, config: { 'cleanup.policy': 'delete' } },
    [TOPICS.subscriptionsChanged]: { partitions: 6, config: { 'cleanup.policy': 'compact' } },
    [TOPICS.tenantsDeleted]: { partitions: 6, config: { 'cleanup.policy': 'delete' } },
  };

/** Topic definitions in the shape `ensureTopics` of @herald/kafka takes. */
export function topicSpecs(topics: readonly Topic[]) {
  return topics.map((topic) => ({
    topic,
    numPartitions: TOPIC_SETTINGS[topic].partitions,
    configEntries: Object.entries(TOPIC_SETTINGS[topic].config).map(([name, value]) => ({
      name,
      value,
    })),
  }));
}

const timestamp = z.iso.datetime({ offset: false });

export const contactSnapshot = z.object({
  id: z.uuid(),
  externalId: z.string().optional(),
  email: z.string(),
  name: z.string().optional(),
  phone: z.string().optional(),
  timeZone: z.string().optional(),
  createdAt: timestamp,
  updatedAt: timestamp,
});

export const contactChangedMessage = z.object({
  version: z.literal(1),
  type: z.enum(['contact.created', 'contact.updated']),
  /** Unique per message, so a consumer can drop repeats of at-least-once delivery. */
  messageId: z.uuid(),
  tenantId: z.uuid(),
  occurredAt: timestamp,
  contact: contactSnapshot,
});

export const contactErasedMessage = z.object({
  version: z.literal(1),
  type: z.literal('contact.erased'),
  messageId: z.uuid(),
  tenantId: z.uuid(),
  contactId: z.uuid(),
  occurredAt: timestamp,
});

export const eventRecordedMessage = z.object({
  version: z.literal(1),
  type: z.literal('event.recorded'),
  /** The Event id: consumers drop repeats of at-least-once delivery by it. */
  messageId: z.uuid(),
  tenantId: z.uuid(),
  eventId: z.uuid(),
  contactId: z.uuid().nullable(),
  organizationExternalId: z.string().nullable(),
  eventName: z.string(),
  occurredAt: timestamp,
  receivedAt: timestamp,
  dedupKey: z.string().nullable(),
  properties: z.record(z.string(), z.unknown()).nullable(),
});

/**
 * The subscription state after a change. `schemaVersion` is this message's format; `version` is
 * the subscription's own counter (+1 on every change, never reused), so `(tenantId, version)`
 * names one change: consumers drop repeats of at-least-once delivery and older states by it.
 */
export const subscriptionChangedMessage = z.object({
  schemaVersion: z.literal(1),
  type: z.literal('subscription.changed'),
  tenantId: z.uuid(),
  state: z.enum(['active', 'suspended']),
  consecutiveFailures: z.number().int().min(0),
  version: z.number().int().min(1),
  changedAt: timestamp,
});

/**
 * A Tenant's deletion, published once everything of it is gone from every service's database
 * (its keys and tokens stopped working when the deletion began, `requestedAt`). Consumers drop
 * what they hold of the Tenant, and repeats by `messageId`.
 */
export const tenantDeletedMessage = z.object({
  version: z.literal(1),
  type: z.literal('tenant.deleted'),
  messageId: z.uuid(),
  tenantId: z.uuid(),
  /** When the operator asked for the deletion: the Tenant's keys were revoked then. */
  requestedAt: timestamp,
  /** When the last of its data was deleted. */
  occurredAt: timestamp,
});

export type ContactSnapshot = z.infer<typeof contactSnapshot>;
export type EventRecordedMessage = z.infer<typeof eventRecordedMessage>;
export type ContactChangedMessage = z.infer<typeof contactChangedMessage>;
export type ContactErasedMessage = z.infer<typeof contactErasedMessage>;
export type SubscriptionChangedMessage = z.infer<typeof subscriptionChangedMessage>;
export type TenantDeletedMessage = z.infer<typeof tenantDeletedMessage>;

/** The schema of each topic's message values (null values are compaction tombstones). */
export const MESSAGE_SCHEMAS = {
  [TOPICS.contactsChanged]: contactChangedMessage,
  [TOPICS.contactsErased]: contactErasedMessage,
  [TOPICS.eventsRecorded]: eventRecordedMessage,
  [TOPICS.subscriptionsChanged]: subscriptionChangedMessage,
  [TOPICS.tenantsDeleted]: tenantDeletedMessage,
} as const satisfies Record<Topic, z.ZodType>;
