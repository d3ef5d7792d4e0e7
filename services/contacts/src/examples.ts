// Requests the local stack accepted and answers it gave, for the OpenAPI document's examples
// (libs/api-reference checks each against its schema).

export const contactWriteExample = {
  email: 'ada@example.com',
  name: 'Ada Lovelace',
  phone: '+442071234567',
  timeZone: 'Europe/London',
};

export const contactExample = {
  id: '93e681c3-0d77-4bdc-b8c8-59297d6f3475',
  externalId: 'user-1842',
  email: 'ada@example.com',
  name: 'Ada Lovelace',
  phone: '+442071234567',
  timeZone: 'Europe/London',
  createdAt: '2026-11-23T09:42:27.346Z',
  updatedAt: '2026-11-23T09:42:27.346Z',
};

export const contactByEmailWriteExample = { email: 'grace@example.com', name: 'Grace Hopper' };

export const contactByEmailExample = {
  id: '8de267ff-f1e4-453a-b61e-e10841f987c9',
  email: 'grace@example.com',
  name: 'Grace Hopper',
  createdAt: '2026-11-23T09:42:44.054Z',
  updatedAt: '2026-11-23T09:42:44.054Z',
};

export const organizationWriteExample = { externalId: 'acme-eu', name: 'Acme Europe' };

export const organizationExample = {
  externalId: 'acme-eu',
  name: 'Acme Europe',
  createdAt: '2026-11-23T09:42:43.969Z',
};
