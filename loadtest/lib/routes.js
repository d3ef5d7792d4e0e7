// Route names: the `name` tag on every request, so each route gets its own thresholds and its own
// line in the summary. Arrays of Events are their own "routes": a 100-Event array is a different
// request from a single Event, with a different latency budget.
import { organizationExternalId } from './config.js';

export const ROUTES = [
  { name: 'contacts.upsert', request: 'PUT /v1/contacts/{externalId}', kind: 'write' },
  { name: 'contacts.upsert_by_email', request: 'POST /v1/contacts', kind: 'write' },
  { name: 'contacts.get', request: 'GET /v1/contacts/{externalId}', kind: 'read' },
  { name: 'contacts.get_by_id', request: 'GET /v1/contacts/by-id/{id}', kind: 'read' },
  { name: 'events.by_contact_id', request: 'POST /v1/events/by-contact-id', kind: 'write' },
  { name: 'events.by_external_id', request: 'POST /v1/events/by-external-id', kind: 'write' },
  { name: 'events.by_email', request: 'POST /v1/events/by-email', kind: 'write' },
  { name: 'events.by_organization', request: 'POST /v1/events/by-organization', kind: 'write' },
  {
    name: 'events.batch.by_contact_id',
    request: 'POST /v1/events/by-contact-id [array]',
    kind: 'batch',
  },
  {
    name: 'events.batch.by_external_id',
    request: 'POST /v1/events/by-external-id [array]',
    kind: 'batch',
  },
  { name: 'token', request: 'POST /v1/token', kind: 'token' },
].filter((r) => r.name !== 'events.by_organization' || organizationExternalId);
