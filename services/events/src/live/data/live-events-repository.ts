import type { Pool } from '@herald/db';

/** An Event as the live view shows it; `properties` is the JSON text as it was sent. */
export interface LiveEvent {
  id: string;
  eventName: string;
  contactId: string | null;
  organizationExternalId: string | null;
  occurredAt: Date;
  receivedAt: Date;
  properties: string | null;
}

interface LiveEventRow {
  id: string;
  event_name: string;
  contact_id: string | null;
  organization_external_id: string | null;
  occurred_at: Date;
  received_at: Date;
  properties: string | null;
}

/**
 * The Tenant's newest `limit` Events recorded after `after`, oldest first (the index on
 * tenant_id, received_at serves it).
 */
export async function eventsRecordedAfter(
  pool: Pool,
  tenantId: string,
  after: Date,
  limit: number,
): Promise<LiveEvent[]> {
  const { rows } = await pool.query<LiveEventRow>(
    `select id, event_name, contact_id, organization_external_id, occurred_at, received_at, properties
       from events
      where tenant_id = $1 and received_at > $2
      order by received_at desc, id desc
      limit $3`,
    [tenantId, after, limit],
  );
  return rows.reverse().map((r) => ({
    id: r.id,
    eventName: r.event_name,
    contactId: r.contact_id,
    organizationExternalId: r.organization_external_id,
    occurredAt: r.occurred_at,
    receivedAt: r.received_at,
    properties: r.properties,
  }));
}
