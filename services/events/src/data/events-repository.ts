import type { PoolClient } from '@herald/db';

/** An Event row about to be written. */
export interface NewEvent {
  id: string;
  contactId: string | null;
  organizationExternalId: string | null;
  eventName: string;
  /** UTC with milliseconds, as every time in the API. */
  occurredAt: string;
  dedupKey: string | null;
  /** The properties' JSON text, or null when none were sent. */
  properties: string | null;
}

/**
 * Inserts the Events in one statement (array parameters, never a placeholder per value) and
 * returns when they were received: the transaction's time, the same for all of them.
 */
export async function insertEvents(
  client: PoolClient,
  tenantId: string,
  events: readonly NewEvent[],
): Promise<Date> {
  if (events.length === 0) return new Date();
  const { rows } = await client.query<{ received_at: Date }>(
    `with inserted as (
       insert into events (id, tenant_id, contact_id, organization_external_id, event_name,
                           occurred_at, dedup_key, properties)
       select e.id, $1, e.contact_id, e.organization_external_id, e.event_name, e.occurred_at,
              e.dedup_key, e.properties
       from unnest($2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::timestamptz[], $7::text[],
                   $8::text[])
         as e(id, contact_id, organization_external_id, event_name, occurred_at, dedup_key,
              properties)
       returning received_at
     )
     select now() as received_at from inserted limit 1`,
    [
      tenantId,
      events.map((e) => e.id),
      events.map((e) => e.contactId),
      events.map((e) => e.organizationExternalId),
      events.map((e) => e.eventName),
      events.map((e) => e.occurredAt),
      events.map((e) => e.dedupKey),
      events.map((e) => e.properties),
    ],
  );
  return rows[0]?.received_at ?? new Date();
}
