// Requests the local stack accepted and answers it gave, for the OpenAPI document's examples
// (libs/api-reference checks each against its schema).
import type { EventRoute } from './recording/event-batch.js';

const contactId = '9d0d6fd0-d171-4e8e-9846-7f4b6df96d67';

/** One request body per Event route, each answered 202. */
export const requestExamples: Record<EventRoute, unknown> = {
  'by-contact-id': {
    contactId,
    eventName: 'order.completed',
    occurredAt: '2026-11-24T01:30:00.000Z',
    dedupKey: 'order-5531',
    properties: { orderId: '5531', total: 42.5, currency: 'EUR' },
  },
  'by-external-id': {
    contactExternalId: 'user-1842',
    eventName: 'cart.viewed',
    occurredAt: '2026-11-24T01:31:00.000Z',
    dedupKey: 'cart-7f3a',
    properties: { items: 3 },
  },
  'by-email': [
    {
      contactEmail: 'ada@example.com',
      eventName: 'newsletter.opened',
      occurredAt: '2026-11-24T00:00:00.000Z',
      dedupKey: 'nl-2026-48-ada',
    },
    {
      contactEmail: 'ADA@example.com',
      eventName: 'newsletter.clicked',
      occurredAt: '2026-11-24T00:01:10.000Z',
      dedupKey: 'nl-2026-48-ada-click',
      properties: { link: 'pricing' },
    },
  ],
  'by-organization': {
    organizationExternalId: 'acme-eu',
    contactId,
    eventName: 'plan.upgraded',
    occurredAt: '2026-11-24T01:35:00.000Z',
    dedupKey: 'plan-acme-eu-2026-11',
    properties: { from: 'starter', to: 'team' },
  },
};

/** What each route answered to its request example: the by-email one holds two Events. */
export const acceptedExamples: Record<EventRoute, unknown> = {
  'by-contact-id': { accepted: 1 },
  'by-external-id': { accepted: 1 },
  'by-email': { accepted: 2 },
  'by-organization': { accepted: 1 },
};

/**
 * By external id, `[{"contactExternalId": "user-1842", …}, {"contactExternalId": "user-9999",
 * "eventName": "cart.viewed", …}]`.
 */
export const unresolvedExample = {
  code: 'unresolved_identity',
  message: '1 event(s) name a contact or organization that does not exist; nothing was recorded',
  unresolved: [
    {
      index: 1,
      eventName: 'cart.viewed',
      contactId: null,
      contactExternalId: 'user-9999',
      contactEmail: null,
      organizationExternalId: null,
    },
  ],
};

/**
 * By external id, `{"contactExternalId": "user-1842", "eventName": "cart.viewed", "occurredAt":
 * "24/11/2026 01:32"}`.
 */
export const validationExample = {
  code: 'validation_error',
  message:
    'event.occurredAt: must be an RFC 3339 date-time with an offset, e.g. 2026-03-04T05:06:07.123Z',
};

/** `GET /admin/v1/tenants/{tenantId}/event-names` after the request examples. */
export const eventNamesExample = {
  eventNames: [
    { name: 'cart.viewed', firstSeenAt: '2026-11-24T02:06:35.672Z' },
    { name: 'newsletter.clicked', firstSeenAt: '2026-11-24T02:06:35.691Z' },
    { name: 'newsletter.opened', firstSeenAt: '2026-11-24T02:06:35.691Z' },
    { name: 'order.completed', firstSeenAt: '2026-11-24T02:06:35.647Z' },
    { name: 'plan.upgraded', firstSeenAt: '2026-11-24T02:06:35.708Z' },
  ],
};

/** The first messages of a live view (text/event-stream). */
export const liveEventsExample = [
  'retry: 3000',
  ': the Events of tenant 80e5b440-6883-43d9-b47a-ab9291d1fa23 as they are recorded',
  '',
  'event: recorded',
  'id: 0f8e2b9c-3d4a-4e61-9f1b-7c2d5a6e8b90',
  'data: {"id":"0f8e2b9c-3d4a-4e61-9f1b-7c2d5a6e8b90","eventName":"Order Completed","contactId":"ea043873-e352-414e-a6c9-2c7b3d40cb98","organizationExternalId":null,"occurredAt":"2026-11-24T02:06:30.000Z","receivedAt":"2026-11-24T02:06:30.412Z","properties":"{\\"orderId\\":\\"A-1001\\"}"}',
  '',
  'event: skipped',
  'data: {"count":37,"atLeast":false}',
  '',
  '',
].join('\n');
