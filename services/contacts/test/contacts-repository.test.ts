// The repository names the Tenant in every statement on a Contact: an id alone reaches no other
// Tenant's Contact, whatever the caller got wrong.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { findContactById, updateContact } from '../src/data/contacts-repository.js';
import { startContactsService, uniqueEmail, type TestContactsService } from './support.js';

let svc: TestContactsService;
beforeAll(async () => {
  svc = await startContactsService();
});
afterAll(() => svc.close());

async function newContact() {
  const { tenantId, token } = svc.newTenant();
  const res = await svc.request('PUT', '/v1/contacts/user-1', {
    token,
    body: { email: uniqueEmail(), name: 'Ada' },
  });
  expect(res.status).toBe(201);
  const { id } = await res.json<{ id: string }>();
  return { tenantId, contact: (await findContactById(svc.pool, tenantId, id))! };
}

describe('updateContact', () => {
  it("when another Tenant's id is given with the Contact's id, then nothing changes and null comes back", async () => {
    const { tenantId, contact } = await newContact();
    const { tenantId: other } = svc.newTenant();

    const updated = await updateContact(svc.pool, other, contact.id, {
      externalId: 'taken-over',
      email: uniqueEmail('intruder'),
      name: 'Mallory',
      phone: null,
      timeZone: null,
    });

    expect(updated).toBeNull();
    expect(await findContactById(svc.pool, tenantId, contact.id)).toStrictEqual(contact);
  });

  it("when the Contact's own Tenant is given, then the row changes", async () => {
    const { tenantId, contact } = await newContact();
    const fields = {
      externalId: 'user-1',
      email: uniqueEmail('renamed'),
      name: 'Ada L.',
      phone: '+4915112345678',
      timeZone: 'Europe/Berlin',
    };

    const updated = await updateContact(svc.pool, tenantId, contact.id, fields);

    expect(updated).toMatchObject({ id: contact.id, tenantId, ...fields });
    expect(await findContactById(svc.pool, tenantId, contact.id)).toStrictEqual(updated);
  });
});
