// Requests the local stack accepted and answers it gave, for the OpenAPI document's examples
// (libs/api-reference checks each against its schema).

export const contactWriteExample = {
  email: 'ada@example.com',
  name: 'Ada Lovelace',
  phone: '+442071234567',
  timeZone: 'Europe/London',
};

/** `PUT /v1/contacts/user-1842` with `contactWriteExample`. */
export const contactCreatedExample = {
  id: '9d0d6fd0-d171-4e8e-9846-7f4b6df96d67',
  externalId: 'user-1842',
  email: 'ada@example.com',
  name: 'Ada Lovelace',
  phone: '+442071234567',
  timeZone: 'Europe/London',
  createdAt: '2026-11-24T02:06:27.084Z',
  updatedAt: '2026-11-24T02:06:27.084Z',
};

/**
 * The same PUT again with `{"email": "ada@example.com", "name": "Ada King, Countess of
 * Lovelace"}` (the fields left out keep their values); the reads answered the same afterwards.
 */
export const contactExample = {
  id: '9d0d6fd0-d171-4e8e-9846-7f4b6df96d67',
  externalId: 'user-1842',
  email: 'ada@example.com',
  name: 'Ada King, Countess of Lovelace',
  phone: '+442071234567',
  timeZone: 'Europe/London',
  createdAt: '2026-11-24T02:06:27.084Z',
  updatedAt: '2026-11-24T02:06:28.106Z',
};

export const contactByEmailWriteExample = { email: 'grace@example.com', name: 'Grace Hopper' };

export const contactByEmailExample = {
  id: '12d4f194-6ccd-4af0-97f3-b1700de57a67',
  email: 'grace@example.com',
  name: 'Grace Hopper',
  createdAt: '2026-11-24T02:06:28.241Z',
  updatedAt: '2026-11-24T02:06:28.241Z',
};

/** `POST /v1/contacts` again with `{"email": "Grace@Example.com", "phone": "+12025550143"}`. */
export const contactByEmailUpdatedExample = {
  id: '12d4f194-6ccd-4af0-97f3-b1700de57a67',
  email: 'Grace@Example.com',
  name: 'Grace Hopper',
  phone: '+12025550143',
  createdAt: '2026-11-24T02:06:28.241Z',
  updatedAt: '2026-11-24T02:06:29.257Z',
};

/** `PUT /v1/contacts/user-1842` with `{"email": "ada.example.com"}`. */
export const contactInvalidExample = {
  code: 'validation_error',
  message: 'body.email: must be an email address like name@example.com',
};

/** `POST /v1/contacts` with `{"name": "Grace Hopper"}`. */
export const contactByEmailInvalidExample = {
  code: 'validation_error',
  message: 'body.email: Invalid input: expected string, received undefined',
};

/** `PUT /v1/contacts/user-8` with the email of the Contact `user-7`. */
export const emailTakenExample = {
  code: 'conflict',
  message: 'the email belongs to another contact with a different externalId; nothing changed',
};

export const noSuchContactExample = { code: 'not_found', message: 'no such contact' };

/**
 * `GET /v1/contacts/user-1842/export` (the by-id export of the Contact gave the same bytes)
 * after the Events of the events service's request examples: one JSON object per line.
 */
export const contactExportExample = `${[
  { type: 'contact', data: contactExample },
  {
    type: 'event',
    data: {
      id: '35e1bc6d-4165-451b-a55c-fb5ea293e658',
      eventName: 'order.completed',
      occurredAt: '2026-11-24T01:30:00.000Z',
      receivedAt: '2026-11-24T02:06:35.647Z',
      organizationExternalId: null,
      dedupKey: 'order-5531',
      properties: { orderId: '5531', total: 42.5, currency: 'EUR' },
    },
  },
  {
    type: 'event',
    data: {
      id: '14c7f784-d07a-4308-81fd-25de1411f343',
      eventName: 'cart.viewed',
      occurredAt: '2026-11-24T01:31:00.000Z',
      receivedAt: '2026-11-24T02:06:35.672Z',
      organizationExternalId: null,
      dedupKey: 'cart-7f3a',
      properties: { items: 3 },
    },
  },
  {
    type: 'event',
    data: {
      id: '4815ab17-885f-4ff0-99ed-cda082b7804d',
      eventName: 'newsletter.opened',
      occurredAt: '2026-11-24T00:00:00.000Z',
      receivedAt: '2026-11-24T02:06:35.691Z',
      organizationExternalId: null,
      dedupKey: 'nl-2026-48-ada',
      properties: null,
    },
  },
  {
    type: 'event',
    data: {
      id: '8d41c6c4-be66-41b7-9960-62c0435abc8a',
      eventName: 'newsletter.clicked',
      occurredAt: '2026-11-24T00:01:10.000Z',
      receivedAt: '2026-11-24T02:06:35.691Z',
      organizationExternalId: null,
      dedupKey: 'nl-2026-48-ada-click',
      properties: { link: 'pricing' },
    },
  },
  {
    type: 'event',
    data: {
      id: '5ce477dc-f514-4eb0-b73c-67b237ff7a5a',
      eventName: 'plan.upgraded',
      occurredAt: '2026-11-24T01:35:00.000Z',
      receivedAt: '2026-11-24T02:06:35.708Z',
      organizationExternalId: 'acme-eu',
      dedupKey: 'plan-acme-eu-2026-11',
      properties: { from: 'starter', to: 'team' },
    },
  },
]
  .map((line) => JSON.stringify(line))
  .join('\n')}\n`;

export const organizationWriteExample = { externalId: 'acme-eu', name: 'Acme Europe' };

export const organizationExample = {
  externalId: 'acme-eu',
  name: 'Acme Europe',
  createdAt: '2026-11-24T02:06:28.230Z',
};

export const organizationListExample = {
  organizations: [
    organizationExample,
    { externalId: 'acme-us', name: null, createdAt: '2026-11-24T02:07:01.015Z' },
  ],
  nextCursor: 'YWNtZS11cw',
};

/** `{"name": "Acme Europe"}` */
export const organizationInvalidExample = {
  code: 'validation_error',
  message: 'body.externalId: Invalid input: expected string, received undefined',
};

/** `{"externalId": "acme-eu"}` once that organization existed. */
export const organizationTakenExample = {
  code: 'conflict',
  message: 'an organization with this externalId already exists',
};
