/** An Event row about to be written (by record_events_batch, record-batch.ts). */
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
