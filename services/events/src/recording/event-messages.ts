import { TOPICS, type EventRecordedMessage } from '@herald/messages';
import type { OutboxMessage } from '@herald/outbox';
import type { NewEvent } from './data/events-repository.js';

/**
 * The Kafka message of a recorded Event. Keyed by its Contact, or by its organization for an
 * organization Event, so that all of one's Events stay ordered in one partition; the Event id is
 * the message id consumers drop repeats by. Its subject is the Contact, so an erasure deletes it
 * while it is still unsent (it may hold personal data in its properties).
 */
export function eventRecorded(
  tenantId: string,
  organizationEvent: boolean,
  event: NewEvent,
  properties: Record<string, unknown> | null,
  receivedAt: Date,
): OutboxMessage {
  const value: EventRecordedMessage = {
    version: 1,
    type: 'event.recorded',
    messageId: event.id,
    tenantId,
    eventId: event.id,
    contactId: event.contactId,
    organizationExternalId: event.organizationExternalId,
    eventName: event.eventName,
    occurredAt: event.occurredAt,
    receivedAt: receivedAt.toISOString(),
    dedupKey: event.dedupKey,
    properties,
  };
  const key = organizationEvent
    ? `${tenantId}:organization:${event.organizationExternalId}`
    : `${tenantId}:contact:${event.contactId}`;
  return { topic: TOPICS.eventsRecorded, key, value, subjectId: event.contactId };
}
