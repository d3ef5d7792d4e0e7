// The operator API's answers as the console reads them: taken from the types generated from the
// OpenAPI document (generated/operator-api.ts), so they follow the services' schemas.
import type { operations } from './generated/operator-api.js';

type Answer<Op extends keyof operations, Status extends number> = operations[Op] extends {
  responses: Record<Status, { content: { 'application/json': infer Body } }>;
}
  ? Body
  : never;

export type TenantPage = Answer<'listTenants', 200>;
export type Tenant = Answer<'getTenant', 200>;
export type ApiKey = Answer<'listApiKeys', 200>['apiKeys'][number];
export type CreatedKey = Answer<'createApiKey', 201>;
export type Billing = Answer<'subscription', 200>;
export type Retention = Answer<'tenantEventRetention', 200>;
export type OrganizationPage = Answer<'listOrganizations', 200>;
export type Organization = OrganizationPage['organizations'][number];
export type EventName = Answer<'eventNames', 200>['eventNames'][number];
export type ContactSearch = Answer<'findContacts', 200>;
export type Contact = ContactSearch['contacts'][number];
export type CreateKeyBody = operations['createApiKey']['requestBody'] extends {
  content: { 'application/json': infer B };
}
  ? B
  : never;

/**
 * One `recorded` message of the live view: its stream's schema is text (Server-Sent Events), so
 * the message's fields are written here, as GET /admin/v1/tenants/{id}/events/live describes them.
 */
export interface LiveEvent {
  id: string;
  eventName: string;
  contactId: string | null;
  organizationExternalId: string | null;
  occurredAt: string;
  receivedAt: string;
  /** The JSON text as recorded. */
  properties: string | null;
}
