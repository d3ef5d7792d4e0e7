// Every method of the client against the running local stack, through the nginx ingress, as a
// customer's code calls it: a fresh Tenant per block, keys and organizations from the operator
// API, and what was recorded counted in the events service's database.
import { randomInt, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Pool } from '@herald/db';
import {
  HeraldClient,
  HeraldError,
  SuspendedError,
  UnresolvedIdentityError,
  type Contact,
  type ExportLine,
} from '../../src/index.js';
import {
  admin,
  eventsDatabase,
  INGRESS,
  newOrganization,
  newPublishableKey,
  newSecretKey,
  newTenant,
  recordedByDedupKey,
  recordedInTenant,
  sleep,
} from '../support.js';
import { startProxy } from '../proxy.js';

const LONG = 120_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let db: Pool;
beforeAll(() => {
  db = eventsDatabase();
});
afterAll(async () => {
  await db.end();
});

/** Generous bounds: the stack is shared and the machine may be slow. */
const patient = { timeoutMs: 30_000, deadlineMs: 90_000, maxAttempts: 8 };

async function secretClient(tenantId: string) {
  const key = await newSecretKey(tenantId);
  return new HeraldClient({
    baseUrl: INGRESS,
    clientId: key.clientId,
    secret: key.secret!,
    ...patient,
  });
}

const email = (label: string) => `${label}-${randomUUID().slice(0, 8)}@example.com`;

async function collect<T>(lines: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const line of lines) out.push(line);
  return out;
}

describe('contacts', () => {
  let client: HeraldClient;
  beforeAll(async () => {
    client = await secretClient(await newTenant('SDK contacts'));
  }, LONG);

  it(
    'when a Contact is upserted by externalId, then it is created once and updated after',
    async () => {
      const externalId = `user/${randomUUID()}`; // a slash travels as %2F
      const address = email('ada');
      const first = await client.contacts.upsert(externalId, { email: address, name: 'Ada' });
      expect(first.created).toBe(true);
      expect(first.contact).toMatchObject({ externalId, email: address, name: 'Ada' });
      expect(first.contact.id).toMatch(UUID);

      const again = await client.contacts.upsert(externalId, {
        email: address,
        phone: '+4915112345678',
        timeZone: 'Europe/Berlin',
      });
      expect(again.created).toBe(false);
      expect(again.contact).toMatchObject({
        id: first.contact.id,
        name: 'Ada',
        phone: '+4915112345678',
        timeZone: 'Europe/Berlin',
      });

      const cleared = await client.contacts.upsert(externalId, { email: address, name: null });
      expect(cleared.contact.name).toBeUndefined();

      expect(await client.contacts.get(externalId)).toStrictEqual(cleared.contact);
      expect(await client.contacts.getById(first.contact.id)).toStrictEqual(cleared.contact);
    },
    LONG,
  );

  it(
    'when a Contact is upserted by email, then it has no externalId and a repeat finds it',
    async () => {
      const address = email('grace');
      const first = await client.contacts.upsertByEmail({ email: address });
      expect(first.created).toBe(true);
      expect(first.contact.externalId).toBeUndefined();
      const again = await client.contacts.upsertByEmail({
        email: address.toUpperCase(),
        name: 'G',
      });
      expect(again).toMatchObject({ created: false, contact: { id: first.contact.id, name: 'G' } });
    },
    LONG,
  );

  it(
    'when a Contact does not exist, then get throws a HeraldError 404 with the request id',
    async () => {
      const error = await client.contacts.get(`nobody-${randomUUID()}`).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HeraldError);
      expect(error).toMatchObject({ status: 404, code: 'not_found', attempts: 1 });
      expect((error as HeraldError).requestId).toEqual(expect.any(String));
    },
    LONG,
  );

  it(
    'when the email belongs to another Contact, then the upsert is a 409 conflict, not resent',
    async () => {
      const address = email('taken');
      await client.contacts.upsert(`a-${randomUUID()}`, { email: address });
      const error = await client.contacts
        .upsert(`b-${randomUUID()}`, { email: address })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 409, code: 'conflict', attempts: 1 });
    },
    LONG,
  );

  it(
    'when a field breaks its rule, then the upsert is a 400 validation_error',
    async () => {
      const error = await client.contacts
        .upsertByEmail({ email: 'not an email' })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 400, code: 'validation_error', attempts: 1 });
    },
    LONG,
  );

  it(
    'when a Contact is erased by externalId and by id, then it is gone',
    async () => {
      const externalId = `erase-${randomUUID()}`;
      const { contact } = await client.contacts.upsert(externalId, { email: email('erase') });
      await client.contacts.erase(externalId);
      await expect(client.contacts.get(externalId)).rejects.toMatchObject({ status: 404 });
      // By id, erasing again answers 204 again.
      await expect(client.contacts.eraseById(contact.id)).resolves.toBeUndefined();
      await expect(client.contacts.getById(contact.id)).rejects.toMatchObject({ status: 404 });

      const other = await client.contacts.upsertByEmail({ email: email('erase-by-id') });
      await client.contacts.eraseById(other.contact.id);
      await expect(client.contacts.getById(other.contact.id)).rejects.toMatchObject({
        status: 404,
      });
    },
    LONG,
  );

  it(
    'when a Contact that never existed is erased by externalId, then it is a 404',
    async () => {
      await expect(client.contacts.erase(`never-${randomUUID()}`)).rejects.toMatchObject({
        status: 404,
        code: 'not_found',
      });
    },
    LONG,
  );
});

describe('events', () => {
  let tenantId: string;
  let client: HeraldClient;
  let contact: Contact;
  let organization: string;

  beforeAll(async () => {
    tenantId = await newTenant('SDK events');
    client = await secretClient(tenantId);
    organization = await newOrganization(tenantId, `org-${randomUUID()}`);
    const externalId = `user-${randomUUID()}`;
    contact = (await client.contacts.upsert(externalId, { email: email('events') })).contact;
  }, LONG);

  it(
    'when Events go to each of the four routes, single and in arrays, then each is recorded once and exported',
    async () => {
      const occurredAt = new Date();
      const answers = [
        await client.events.byContactId({ contactId: contact.id, eventName: 'A', occurredAt }),
        await client.events.byExternalId([
          { contactExternalId: contact.externalId!, eventName: 'B', occurredAt },
          {
            contactExternalId: contact.externalId!,
            eventName: 'B',
            occurredAt,
            properties: { total: 42, items: ['x'] },
            organizationExternalId: organization,
          },
        ]),
        await client.events.byEmail({
          contactEmail: contact.email.toUpperCase(),
          eventName: 'C',
          occurredAt: occurredAt.toISOString(),
          dedupKey: `mine-${randomUUID()}`,
        }),
        await client.events.byOrganization([
          {
            organizationExternalId: organization,
            contactId: contact.id,
            eventName: 'D',
            occurredAt,
          },
          { organizationExternalId: organization, eventName: 'E', occurredAt },
        ]),
      ];
      expect(answers).toStrictEqual([
        { accepted: 1 },
        { accepted: 2 },
        { accepted: 1 },
        { accepted: 2 },
      ]);

      const lines = await collect<ExportLine>(client.contacts.exportById(contact.id));
      expect(lines[0]).toStrictEqual({ type: 'contact', data: contact });
      const events = lines.slice(1).map((line) => {
        expect(line.type).toBe('event');
        return line.type === 'event' ? line.data : undefined;
      });
      // Every Event naming the Contact (E names only the organization).
      expect(events.map((e) => e!.eventName).sort()).toStrictEqual(['A', 'B', 'B', 'C', 'D']);
      expect(events.find((e) => e!.properties !== null)!.properties).toStrictEqual({
        total: 42,
        items: ['x'],
      });
      const keys = events.map((e) => e!.dedupKey!);
      expect(keys.every((k) => typeof k === 'string')).toBe(true);
      expect([...(await recordedByDedupKey(db, tenantId, keys)).values()]).toStrictEqual(
        keys.map(() => 1),
      );
      expect(await recordedInTenant(db, tenantId)).toBe(6);

      const byExternalId = await collect(client.contacts.export(contact.externalId!));
      expect(byExternalId).toStrictEqual(lines);
    },
    LONG,
  );

  it(
    'when the export is left early, then the transfer is cancelled and the client goes on',
    async () => {
      for await (const line of client.contacts.exportById(contact.id)) {
        expect(line.type).toBe('contact');
        break;
      }
      await expect(client.contacts.getById(contact.id)).resolves.toMatchObject({ id: contact.id });
    },
    LONG,
  );

  it(
    'when an Event names a Contact that does not exist, then an UnresolvedIdentityError lists it and nothing is recorded',
    async () => {
      const before = await recordedInTenant(db, tenantId);
      const ghost = `ghost-${randomUUID()}`;
      const error = await client.events
        .byExternalId([
          { contactExternalId: contact.externalId!, eventName: 'ok', occurredAt: new Date() },
          { contactExternalId: ghost, eventName: 'lost', occurredAt: new Date() },
        ])
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnresolvedIdentityError);
      const unresolved = error as UnresolvedIdentityError;
      expect(unresolved).toMatchObject({ status: 422, code: 'unresolved_identity', attempts: 1 });
      expect(unresolved.requestId).toEqual(expect.any(String));
      expect(unresolved.unresolved).toStrictEqual([
        {
          index: 1,
          eventName: 'lost',
          contactId: null,
          contactExternalId: ghost,
          contactEmail: null,
          organizationExternalId: null,
        },
      ]);
      expect(unresolved.events).toHaveLength(2);
      expect(await recordedInTenant(db, tenantId)).toBe(before);

      // The documented way on: create what is missing, resend the same Events.
      await client.contacts.upsert(ghost, { email: email('ghost') });
      expect(await client.events.byExternalId(unresolved.events as never)).toStrictEqual({
        accepted: 2,
      });
      const keys = unresolved.events.map((e) => e.dedupKey as string);
      expect([...(await recordedByDedupKey(db, tenantId, keys)).values()]).toStrictEqual([1, 1]);
    },
    LONG,
  );

  it(
    'when an Event is invalid, then it is a 400 validation_error and not resent',
    async () => {
      const error = await client.events
        .byContactId({ contactId: contact.id, eventName: '', occurredAt: 'yesterday' })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 400, code: 'validation_error', attempts: 1 });
    },
    LONG,
  );

  it(
    'when the same dedupKey is sent twice, then the Event is recorded once',
    async () => {
      const dedupKey = `twice-${randomUUID()}`;
      const event = { contactId: contact.id, eventName: 'Twice', occurredAt: new Date(), dedupKey };
      await client.events.byContactId(event);
      await client.events.byContactId(event);
      expect((await recordedByDedupKey(db, tenantId, [dedupKey])).get(dedupKey)).toBe(1);
    },
    LONG,
  );
});

describe('keys', () => {
  it(
    'when the key is publishable, then it records Events by contactId and the Contact methods are refused',
    async () => {
      const tenantId = await newTenant('SDK publishable');
      const writer = await secretClient(tenantId);
      const externalId = `web-${randomUUID()}`;
      const { contact } = await writer.contacts.upsert(externalId, { email: email('web') });
      const key = await newPublishableKey(tenantId);
      const browser = new HeraldClient({
        baseUrl: INGRESS,
        publishableKey: key.clientId,
        ...patient,
      });

      const dedupKey = `web-${randomUUID()}`;
      await expect(
        browser.events.byContactId({
          contactId: contact.id,
          eventName: 'Page Viewed',
          occurredAt: new Date(),
          dedupKey,
        }),
      ).resolves.toStrictEqual({ accepted: 1 });
      expect((await recordedByDedupKey(db, tenantId, [dedupKey])).get(dedupKey)).toBe(1);

      // The API would answer 403 (and a browser's CORS would not even let the request out):
      // the client refuses at once, sending nothing.
      const error = await browser.contacts.get(externalId).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HeraldError);
      expect(error).toMatchObject({ code: 'insufficient_scope', status: null, attempts: 0 });

      // The API's own 403 for a key without the scope, as a HeraldError.
      const narrow = await newSecretKey(tenantId, ['events:write']);
      const server = new HeraldClient({
        baseUrl: INGRESS,
        clientId: narrow.clientId,
        secret: narrow.secret!,
        ...patient,
      });
      const refused = await server.contacts.get(externalId).catch((e: unknown) => e);
      expect(refused).toMatchObject({ status: 403, code: 'insufficient_scope', attempts: 1 });
      expect((refused as HeraldError).message).toMatch(/contacts:read/);
    },
    LONG,
  );

  it(
    'when the secret is wrong, then the call fails with invalid_client at once',
    async () => {
      const tenantId = await newTenant('SDK wrong secret');
      const key = await newSecretKey(tenantId);
      // A failed exchange counts against the client address: this one speaks from a loopback
      // address of its own (as the e2e guard tests do), so no other test's address pays.
      const address = `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
      const proxy = await startProxy(INGRESS, () => ({ action: 'forward' }), address);
      try {
        const client = new HeraldClient({
          baseUrl: proxy.url,
          clientId: key.clientId,
          secret: `sk_${'x'.repeat(43)}`,
          ...patient,
        });
        const error = await client.contacts.get('anyone').catch((e: unknown) => e);
        expect(error).toBeInstanceOf(HeraldError);
        expect(error).toMatchObject({ status: 401, code: 'invalid_client', attempts: 1 });
        expect(proxy.handled.map((r) => r.path)).toStrictEqual(['/v1/token']);
      } finally {
        await proxy.close();
      }
    },
    LONG,
  );
});

describe('subscription', () => {
  it(
    'when the Tenant is suspended, then writes throw a SuspendedError and are not resent',
    async () => {
      const tenantId = await newTenant('SDK suspended');
      const client = await secretClient(tenantId);
      const externalId = `s-${randomUUID()}`;
      const { contact } = await client.contacts.upsert(externalId, { email: email('s') });

      for (let i = 0; i < 3; i += 1) {
        const res = await admin('POST', `/tenants/${tenantId}/billing/payment-failures`);
        expect(res.status).toBe(200);
      }
      const state = await (await admin('GET', `/tenants/${tenantId}/billing`)).json();
      expect(state.state).toBe('suspended');

      // The suspension reaches every service within a second: wait for it (bounded).
      let error: unknown;
      for (let i = 0; i < 60; i += 1) {
        error = await client.contacts
          .upsert(externalId, { email: contact.email })
          .then(() => undefined)
          .catch((e: unknown) => e);
        if (error) break;
        await sleep(500);
      }
      expect(error).toBeInstanceOf(SuspendedError);
      expect(error).toMatchObject({ status: 402, code: 'subscription_suspended', attempts: 1 });

      const eventError = await client.events
        .byContactId({ contactId: contact.id, eventName: 'x', occurredAt: new Date() })
        .catch((e: unknown) => e);
      expect(eventError).toBeInstanceOf(SuspendedError);
      expect((eventError as SuspendedError).requestId).toEqual(expect.any(String));
      expect(await recordedInTenant(db, tenantId)).toBe(0);

      // Reads and erasure keep working while suspended.
      await expect(client.contacts.get(externalId)).resolves.toMatchObject({ id: contact.id });
      await expect(client.contacts.erase(externalId)).resolves.toBeUndefined();
    },
    LONG,
  );
});
