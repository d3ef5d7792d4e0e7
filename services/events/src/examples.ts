// Requests the local stack accepted and answers it gave, for the OpenAPI document's examples
// (libs/api-reference checks each against its schema).
import type { EventRoute } from './domain/event-batch.js';

const contactId = '93e681c3-0d77-4bdc-b8c8-59297d6f3475';

/** One request body per Event route, each answered 202. */
export const requestExamples: Record<EventRoute, unknown> = {
  'by-contact-id': {
    contactId,
    eventName: 'order.completed',
    occurredAt: '2026-11-23T09:30:00.000Z',
    dedupKey: 'order-5531',
    properties: { orderId: '5531', total: 42.5, currency: 'EUR' },
  },
  'by-external-id': {
    contactExternalId: 'user-1842',
    eventName: 'cart.viewed',
    occurredAt: '2026-11-23T09:31:00.000Z',
    dedupKey: 'cart-7f3a',
    properties: { items: 3 },
  },
  'by-email': [
    {
      contactEmail: 'ada@example.com',
      eventName: 'newsletter.opened',
      occurredAt: '2026-11-23T08:00:00.000Z',
      dedupKey: 'nl-2026-47-ada',
    },
    {
      contactEmail: 'ADA@example.com',
      eventName: 'newsletter.clicked',
      occurredAt: '2026-11-23T08:01:10.000Z',
      dedupKey: 'nl-2026-47-ada-click',
      properties: { link: 'pricing' },
    },
  ],
  'by-organization': {
    organizationExternalId: 'acme-eu',
    contactId,
    eventName: 'plan.upgraded',
    occurredAt: '2026-11-23T09:35:00.000Z',
    dedupKey: 'plan-acme-eu-2026-11',
    properties: { from: 'starter', to: 'team' },
  },
};

export const acceptedExample = { accepted: 1 };

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

export const validationExample = {
  code: 'validation_error',
  message:
    'event.occurredAt: must be an RFC 3339 date-time with an offset, e.g. 2026-03-04T05:06:07.123Z',
};
