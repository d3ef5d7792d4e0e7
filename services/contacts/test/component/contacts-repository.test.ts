// The repository names the Tenant in every statement on a Contact: an id alone reaches no other
// Tenant's Contact, whatever the caller got wrong.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { findContactById, upsertContact } from '../../src/data/contacts-repository.js';
import { startContactsService, uniqueEmail, type TestContactsService } from '../support.js';

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

const upsertOf = (tenantId: string, fields: { externalId: string; email: string; name: string }) =>
  upsertContact(svc.pool, {
    tenantId,
    ...fields,
    newId: randomUUID(),
    messageId: randomUUID(),
    topic: 'herald.contacts.changed',
    headers: {},
  });

describe('upsertContact', () => {
  it("when another Tenant upserts the Contact's externalId and email, then it gets a Contact of its own and the first is untouched", async () => {
    const { tenantId, contact } = await newContact();
    const { tenantId: other } = svc.newTenant();

    const result = await upsertOf(other, {
      externalId: 'user-1',
      email: contact.email,
      name: 'Mallory',
    });

    expect(result.status).toBe('created');
    expect(result.status !== 'conflict' && result.contact.id).not.toBe(contact.id);
    expect(await findContactById(svc.pool, tenantId, contact.id)).toStrictEqual(contact);
    expect(await findContactById(svc.pool, other, contact.id)).toBeNull();
  });

  it("when the Contact's own Tenant upserts it, then the row changes", async () => {
    const { tenantId, contact } = await newContact();

    const result = await upsertOf(tenantId, {
      externalId: 'user-1',
      email: contact.email,
      name: 'Ada L.',
    });

    expect(result).toMatchObject({
      status: 'updated',
      contact: { id: contact.id, name: 'Ada L.' },
    });
    expect(await findContactById(svc.pool, tenantId, contact.id)).toStrictEqual(
      result.status !== 'conflict' && result.contact,
    );
  });
});
