// Test support for the relay and the Contact-data seam (export, erasure): disposable databases,
// Events written straight into the tables, the internal routes in-process, Kafka read back.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseServiceCallers } from '@herald/auth';
import { createPool, type Pool, type PoolClient } from '@herald/db';
import { createHttpApp, createLogger, startServer } from '@herald/http';
import type { Kafka } from '@herald/kafka';
import { TOPICS, topicSpecs, type EventRecordedMessage } from '@herald/messages';
import { enqueue } from '@herald/outbox';
import {
  ensureTestTopics,
  prepareTestDatabase as prepare,
  TEST_KAFKA_BROKERS,
  TEST_POSTGRES_URL,
  testDatabaseUrl,
  testKafka as kafkaClient,
  watchTopics as watchTestTopics,
  type TopicMessage,
  type TopicWatch,
} from '@herald/testing';
import type { ContactIdentityMessage } from '../src/identity-projection/contact-identities-consumer.js';
import { mountInternalRoutes } from '../src/export-erasure/routes.js';

export const SERVER_URL = TEST_POSTGRES_URL;
export const KAFKA_BROKERS = TEST_KAFKA_BROKERS;
export const CONTACT_DATA_SERVICE_TOKEN = `test-service-${randomUUID()}`;

const MIGRATIONS = fileURLToPath(new URL('../migrations', import.meta.url));
// Serializes test workers while they create or reset a database (any constant will do).
const SETUP_LOCK_ID = 7_210_383;

export const silentLogger = () =>
  createLogger({ service: 'events-test', level: process.env.EVENTS_TEST_LOG ?? 'silent' });

/**
 * Creates the database when missing and migrates it; one whose migrations changed after they
 * were applied (they are still being written) is dropped and built again. The name must start
 * with `herald_events_test`.
 */
export async function prepareTestDatabase(database: string): Promise<void> {
  if (!/^herald_events_test[a-z0-9_]*$/.test(database)) {
    throw new Error(`not a disposable test database: ${database}`);
  }
  await prepare({
    database,
    migrationsDir: MIGRATIONS,
    lockId: SETUP_LOCK_ID,
    applicationName: 'events-test',
  });
}

export const databaseUrl = (database: string): string => testDatabaseUrl(database);

export function testPool(database: string, max = 10): Pool {
  return createPool({
    connectionString: databaseUrl(database),
    applicationName: 'events-test',
    max,
  });
}

export interface StoredEvent {
  id: string;
  tenantId: string;
  contactId: string | null;
  organizationExternalId: string | null;
  eventName: string;
  occurredAt: string;
  receivedAt: string;
  dedupKey: string | null;
  /** The stored JSON text. */
  properties: string | null;
}

/** An Event row as recording stores it; every field can be given. */
export function newEvent(fields: Partial<StoredEvent> & { tenantId: string }): StoredEvent {
  return {
    id: randomUUID(),
    contactId: null,
    organizationExternalId: null,
    eventName: 'Order Placed',
    occurredAt: '2026-11-20T10:00:00.000Z',
    receivedAt: new Date().toISOString(),
    dedupKey: null,
    properties: null,
    ...fields,
  };
}

/** Writes Event rows directly (one statement, any number), with the pool or in a transaction. */
export async function insertEvents(
  pool: Pool | PoolClient,
  events: readonly StoredEvent[],
): Promise<void> {
  await pool.query(
    `insert into events (id, tenant_id, contact_id, organization_external_id, event_name,
                         occurred_at, received_at, dedup_key, properties)
     select * from unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[],
                          $6::timestamptz[], $7::timestamptz[], $8::text[], $9::text[])`,
    [
      events.map((e) => e.id),
      events.map((e) => e.tenantId),
      events.map((e) => e.contactId),
      events.map((e) => e.organizationExternalId),
      events.map((e) => e.eventName),
      events.map((e) => e.occurredAt),
      events.map((e) => e.receivedAt),
      events.map((e) => e.dedupKey),
      events.map((e) => e.properties),
    ],
  );
}

/** The dedup claim recording takes for an Event with a dedupKey. */
export async function insertDedupClaim(
  pool: Pool,
  claim: { tenantId: string; dedupKey: string; eventId: string; claimedAt?: string },
): Promise<void> {
  await pool.query(
    `insert into dedup_claims (tenant_id, dedup_key, event_id, claimed_at)
     values ($1, $2, $3, coalesce($4::timestamptz, now()))`,
    [claim.tenantId, claim.dedupKey, claim.eventId, claim.claimedAt ?? null],
  );
}

/**
 * The partition key of an Event's message as a Contact route keys it (see TOPICS.eventsRecorded;
 * by-organization keys by the organization even when a Contact is named).
 */
export function eventKey(event: StoredEvent): string {
  return event.contactId
    ? `${event.tenantId}:contact:${event.contactId}`
    : `${event.tenantId}:organization:${event.organizationExternalId ?? ''}`;
}

export function recordedMessage(event: StoredEvent): EventRecordedMessage {
  return {
    version: 1,
    type: 'event.recorded',
    messageId: event.id,
    tenantId: event.tenantId,
    eventId: event.id,
    contactId: event.contactId,
    organizationExternalId: event.organizationExternalId,
    eventName: event.eventName,
    occurredAt: event.occurredAt,
    receivedAt: event.receivedAt,
    dedupKey: event.dedupKey,
    properties: event.properties === null ? null : JSON.parse(event.properties),
  };
}

/** The outbox messages recording writes with its Events (same transaction there). */
export async function enqueueRecorded(pool: Pool, events: readonly StoredEvent[]): Promise<void> {
  await enqueue(
    pool,
    events.map((event) => ({
      topic: TOPICS.eventsRecorded,
      key: eventKey(event),
      subjectId: event.contactId,
      value: recordedMessage(event),
    })),
  );
}

/** The internal routes alone, in-process on port 0 (the service's app mounts the same). */
export async function startContactDataRoutes(pool: Pool): Promise<{
  url: string;
  close(): Promise<void>;
}> {
  const logger = silentLogger();
  const app = createHttpApp({
    logger,
    routes: (a) =>
      mountInternalRoutes(a, {
        pool,
        // the contacts service's token: it calls these routes
        serviceCallers: parseServiceCallers(`contacts:${CONTACT_DATA_SERVICE_TOKEN}`),
        logger,
      }),
  });
  const running = await startServer(app, { host: '127.0.0.1', port: 0, logger });
  return { url: running.url, close: () => running.close() };
}

export function internalPath(
  tenantId: string,
  contactId: string,
  action: 'export' | 'erase',
): string {
  return `/internal/v1/tenants/${tenantId}/contacts/${contactId}/${action}`;
}

/** Reads a JSON Lines body into parsed lines. */
export function parseLines(body: string): unknown[] {
  return body
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as unknown);
}

export function testKafka(clientId = 'events-test'): Kafka {
  return kafkaClient(clientId);
}

export function ensureEventsTopic(): Promise<void> {
  return ensureTestTopics(topicSpecs([TOPICS.eventsRecorded]), 'events-test-setup');
}

export type { TopicMessage as ReceivedMessage, TopicWatch };

/** Reads the topics from their current end on (see watchTopics in @herald/testing). */
export function watchTopics(topics: readonly string[]): Promise<TopicWatch> {
  return watchTestTopics(topics, { clientId: 'events-test-watch', groupPrefix: 'events-test' });
}

/** A contact.updated message as the contacts service writes it, for the identity projection. */
export function contactSnapshotMessage(
  tenantId: string,
  contactId: string,
  updatedAt: string,
  externalId?: string,
): ContactIdentityMessage {
  return {
    topic: TOPICS.contactsChanged,
    key: contactId,
    value: JSON.stringify({
      version: 1,
      type: 'contact.updated',
      messageId: randomUUID(),
      tenantId,
      occurredAt: updatedAt,
      contact: {
        id: contactId,
        ...(externalId === undefined ? {} : { externalId }),
        email: 'someone@example.com',
        createdAt: '2026-11-01T10:00:00.000Z',
        updatedAt,
      },
    }),
  };
}

/** A contact.erased message as the contacts service writes it. */
export function contactErasedMessage(tenantId: string, contactId: string): ContactIdentityMessage {
  return {
    topic: TOPICS.contactsErased,
    key: contactId,
    value: JSON.stringify({
      version: 1,
      type: 'contact.erased',
      messageId: randomUUID(),
      tenantId,
      contactId,
      occurredAt: '2026-11-22T10:00:00.000Z',
    }),
  };
}
