// POST /v1/contacts/{externalId}/erase and POST /v1/contacts/by-id/{id}/erase: the answers, what
// is left in the database, the order against the services holding data about the Contact, and
// the messages on Kafka; afterwards the Contact is gone as if it never existed.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { createKafka, createProducer, type Producer } from '@herald/kafka';
import { contactErasedMessage, TOPICS } from '@herald/messages';
import { createOutboxRelay, type OutboxRelay } from '@herald/outbox';
import { eraseContact } from '../../src/domain/erasure.js';
import {
  ensureContactsTopics,
  KAFKA_BROKERS,
  SERVICE_TOKEN,
  startContactsService,
  startFakeService,
  uniqueEmail,
  UUID,
  watchTopics,
  type TestContactsService,
  type TopicWatch,
} from '../support.js';

// This file runs an outbox relay, which publishes and deletes outbox rows: its own database.
const DATABASE = 'herald_contacts_test_erasure';

type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;
function noContent(_req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(204);
  res.end();
}

// One fake participant (the events service's seam); tests set how it answers.
let answer: Handler = noContent;
const participantCalls: Array<{ method: string; url: string; authorization?: string }> = [];

let participant: Awaited<ReturnType<typeof startFakeService>>;
let plain: TestContactsService;
let svc: TestContactsService;
let producer: Producer;
let relay: OutboxRelay;
let watch: TopicWatch;

beforeAll(async () => {
  await ensureContactsTopics();
  participant = await startFakeService((req, res) => {
    participantCalls.push({
      method: req.method ?? '',
      url: req.url ?? '',
      authorization: req.headers.authorization,
    });
    void answer(req, res);
  });
  [plain, svc] = await Promise.all([
    startContactsService({ database: DATABASE }),
    startContactsService({
      database: DATABASE,
      deps: { contactDataServiceUrls: [participant.url] },
    }),
  ]);
  watch = await watchTopics([TOPICS.contactsChanged, TOPICS.contactsErased]);
  producer = createProducer(
    createKafka({ brokers: KAFKA_BROKERS, clientId: 'contacts-test-relay' }),
  );
  relay = createOutboxRelay({
    pool: plain.pool,
    producer,
    logger: pino({ level: 'silent' }),
    name: 'contacts',
    pollIntervalMs: 50,
  });
  relay.start();
});

afterAll(async () => {
  await relay.stop();
  await producer.close();
  await watch.stop();
  await Promise.all([plain.close(), svc.close()]);
  await participant.close();
});

interface Created {
  id: string;
  externalId?: string;
  email: string;
}

/** A new Tenant with one Contact in it (by externalId, or by email alone). */
async function arrange(on: TestContactsService, options: { externalId?: string | null } = {}) {
  const tenantId = randomUUID();
  const token = on.tokenFor(tenantId, ['contacts:read', 'contacts:write', 'contacts:erase']);
  const email = uniqueEmail('erase');
  const externalId = options.externalId === undefined ? `user-${randomUUID()}` : options.externalId;
  const res =
    externalId === null
      ? await on.request('POST', '/v1/contacts', { token, body: { email, name: 'Grace' } })
      : await on.request('PUT', `/v1/contacts/${encodeURIComponent(externalId)}`, {
          token,
          body: { email, name: 'Grace Hopper', phone: '+15555550123' },
        });
  expect(res.status).toBe(201);
  return { tenantId, token, contact: await res.json<Created>() };
}

const eraseById = (on: TestContactsService, token: string, id: string) =>
  on.request('POST', `/v1/contacts/by-id/${id}/erase`, { token });
const eraseByExternalId = (on: TestContactsService, token: string, externalId: string) =>
  on.request('POST', `/v1/contacts/${encodeURIComponent(externalId)}/erase`, { token });

async function expectNotFound(res: Response) {
  expect(res.status).toBe(404);
  expect(await res.json()).toMatchObject({ code: 'not_found' });
}

describe('erase: the answers', () => {
  it('when a Contact is erased by id, then 204 with no body, and reads and exports of it answer 404', async () => {
    const { token, contact, tenantId } = await arrange(plain);
    const res = await eraseById(plain, token, contact.id);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');

    await expectNotFound(await plain.request('GET', `/v1/contacts/by-id/${contact.id}`, { token }));
    await expectNotFound(
      await plain.request('GET', `/v1/contacts/${contact.externalId}`, { token }),
    );
    const exporter = plain.tokenFor(tenantId, ['contacts:export']);
    await expectNotFound(
      await plain.request('GET', `/v1/contacts/by-id/${contact.id}/export`, { token: exporter }),
    );
  });

  it('when an erased Contact is erased again by id, then 204 again; by its old externalId, then 404', async () => {
    const { token, contact } = await arrange(plain);
    expect((await eraseByExternalId(plain, token, contact.externalId!)).status).toBe(204);

    const again = await eraseById(plain, token, contact.id);
    expect(again.status).toBe(204);
    expect((await eraseById(plain, token, contact.id.toUpperCase())).status).toBe(204);
    await expectNotFound(await eraseByExternalId(plain, token, contact.externalId!));
  });

  it('when a Contact created by email alone is erased by id, then 204 and it is gone', async () => {
    const { token, contact } = await arrange(plain, { externalId: null });
    expect((await eraseById(plain, token, contact.id)).status).toBe(204);
    await expectNotFound(await plain.request('GET', `/v1/contacts/by-id/${contact.id}`, { token }));
  });

  it.each([
    ['an id that never named a Contact', () => `/v1/contacts/by-id/${randomUUID()}/erase`],
    ['a malformed id', () => '/v1/contacts/by-id/not-a-uuid/erase'],
    ['an unknown externalId', () => `/v1/contacts/nobody-${randomUUID()}/erase`],
    ['an externalId with U+0000', () => '/v1/contacts/a%00b/erase'],
  ])('when the path names %s, then 404 not_found', async (_what, path) => {
    const token = plain.tokenFor(randomUUID(), ['contacts:erase']);
    await expectNotFound(await plain.request('POST', path(), { token }));
  });

  it("when another Tenant's key names a Contact, live or erased, then 404 and the Contact is untouched", async () => {
    const { token, contact } = await arrange(plain);
    const erased = await arrange(plain);
    expect((await eraseById(plain, erased.token, erased.contact.id)).status).toBe(204);

    const other = plain.tokenFor(randomUUID(), ['contacts:erase', 'contacts:read']);
    await expectNotFound(await eraseById(plain, other, contact.id));
    await expectNotFound(await eraseByExternalId(plain, other, contact.externalId!));
    await expectNotFound(await eraseById(plain, other, erased.contact.id));
    const read = await plain.request('GET', `/v1/contacts/by-id/${contact.id}`, { token });
    expect(read.status).toBe(200);
  });

  it('when the key lacks contacts:erase, then 403 naming it and the Contact stays', async () => {
    const { tenantId, token, contact } = await arrange(plain);
    const weak = plain.tokenFor(tenantId, [
      'contacts:read',
      'contacts:write',
      'contacts:export',
      'events:write',
    ]);
    for (const res of [
      await eraseById(plain, weak, contact.id),
      await eraseByExternalId(plain, weak, contact.externalId!),
    ]) {
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({
        code: 'insufficient_scope',
        message: 'missing scope contacts:erase',
      });
    }
    const read = await plain.request('GET', `/v1/contacts/by-id/${contact.id}`, { token });
    expect(read.status).toBe(200);
  });

  it('when there is no token, then 401; when the method is not POST, then 405 with Allow: POST', async () => {
    const { contact, token } = await arrange(plain);
    const anonymous = await plain.request('POST', `/v1/contacts/by-id/${contact.id}/erase`);
    expect(anonymous.status).toBe(401);
    for (const path of [
      `/v1/contacts/by-id/${contact.id}/erase`,
      `/v1/contacts/${contact.externalId}/erase`,
    ]) {
      const res = await plain.request('DELETE', path, { token });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
  });

  it('when the email and externalId of an erased Contact are written again, then they name a new Contact with a new id', async () => {
    const { token, contact } = await arrange(plain);
    expect((await eraseById(plain, token, contact.id)).status).toBe(204);

    const put = await plain.request('PUT', `/v1/contacts/${contact.externalId}`, {
      token,
      body: { email: contact.email },
    });
    expect(put.status).toBe(201);
    const reborn = await put.json();
    expect(reborn).toMatchObject({ externalId: contact.externalId, email: contact.email });
    expect(reborn.id).toMatch(UUID);
    expect(reborn.id).not.toBe(contact.id);
    expect(reborn).not.toHaveProperty('name');

    // By email alone, too.
    const emailOnly = await arrange(plain, { externalId: null });
    expect((await eraseById(plain, emailOnly.token, emailOnly.contact.id)).status).toBe(204);
    const post = await plain.request('POST', '/v1/contacts', {
      token: emailOnly.token,
      body: { email: emailOnly.contact.email },
    });
    expect(post.status).toBe(201);
    expect((await post.json()).id).not.toBe(emailOnly.contact.id);
    // The old id stays erased.
    expect((await eraseById(plain, emailOnly.token, emailOnly.contact.id)).status).toBe(204);
  });
});

describe('erase: what is left', () => {
  it('when a Contact is erased, then its row is gone and the tombstone holds the bare id and Tenant only', async () => {
    const { tenantId, token, contact } = await arrange(plain);
    expect((await eraseById(plain, token, contact.id)).status).toBe(204);

    const rows = await plain.pool.query('select * from contacts where id = $1', [contact.id]);
    expect(rows.rowCount).toBe(0);
    const { rows: tombstones } = await plain.pool.query(
      'select * from contact_tombstones where id = $1',
      [contact.id],
    );
    expect(tombstones).toEqual([
      { id: contact.id, tenant_id: tenantId, erased_at: expect.any(Date) },
    ]);
  });

  it("when a Contact with unsent messages is erased, then the outbox holds no message about it but the erasure's own", async () => {
    const { token, contact } = await arrange(plain);
    await relay.stop();
    try {
      const update = await plain.request('PUT', `/v1/contacts/${contact.externalId}`, {
        token,
        body: { email: contact.email, name: 'Grace B. Hopper' },
      });
      expect(update.status).toBe(200);
      const pending = await plain.pool.query('select 1 from outbox where subject_id = $1', [
        contact.id,
      ]);
      expect(pending.rowCount).toBeGreaterThan(0);

      expect((await eraseById(plain, token, contact.id)).status).toBe(204);

      const { rows } = await plain.pool.query<{ topic: string; value: string | null }>(
        'select topic, value from outbox where key = $1 or subject_id::text = $1 order by id',
        [contact.id],
      );
      expect(rows.map((r) => r.topic)).toEqual([TOPICS.contactsChanged, TOPICS.contactsErased]);
      expect(rows.every((r) => !(r.value ?? '').includes(contact.email))).toBe(true);
      expect(rows.every((r) => !(r.value ?? '').includes('Grace'))).toBe(true);
    } finally {
      relay.start();
    }
  });
});

describe('erase: Kafka', () => {
  it('when a Contact is erased, then contact.erased (id only) and a tombstone on the changed topic are published', async () => {
    const { tenantId, token, contact } = await arrange(plain);
    expect((await eraseById(plain, token, contact.id)).status).toBe(204);

    const erased = await watch.waitFor(
      (m) => m.topic === TOPICS.contactsErased && m.key === contact.id,
    );
    expect(contactErasedMessage.parse(erased.value)).toEqual(erased.value);
    expect(erased.value).toEqual({
      version: 1,
      type: 'contact.erased',
      messageId: expect.stringMatching(UUID),
      tenantId,
      contactId: contact.id,
      occurredAt: expect.any(String),
    });
    expect(erased.raw).not.toContain(contact.email);
    expect(erased.raw).not.toContain(contact.externalId);

    const tombstone = await watch.waitFor(
      (m) => m.topic === TOPICS.contactsChanged && m.key === contact.id && m.value === null,
    );
    expect(tombstone.raw).toBeNull();
  });
});

describe('erase: the services holding data about the Contact', () => {
  it('when a Contact is erased, then every participant is asked first, while the Contact is still here', async () => {
    const { tenantId, token, contact } = await arrange(svc);
    let existedDuringCall: boolean | undefined;
    answer = async (_req, res) => {
      const { rowCount } = await svc.pool.query('select 1 from contacts where id = $1', [
        contact.id,
      ]);
      existedDuringCall = rowCount === 1;
      noContent(_req, res);
    };
    participantCalls.length = 0;

    expect((await eraseById(svc, token, contact.id)).status).toBe(204);
    expect(existedDuringCall).toBe(true);
    expect(participantCalls).toEqual([
      {
        method: 'POST',
        url: `/internal/v1/tenants/${tenantId}/contacts/${contact.id}/erase`,
        authorization: `Bearer ${SERVICE_TOKEN}`,
      },
    ]);
    answer = noContent;
  });

  it('when a participant fails, then 503 with Retry-After and the Contact stays; the retry then erases it', async () => {
    const { token, contact } = await arrange(svc);
    answer = (_req, res) => {
      res.writeHead(500);
      res.end();
    };
    const failed = await eraseByExternalId(svc, token, contact.externalId!);
    expect(failed.status).toBe(503);
    expect(failed.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await failed.json()).toMatchObject({ code: 'service_unavailable' });
    const stillThere = await svc.request('GET', `/v1/contacts/by-id/${contact.id}`, { token });
    expect(stillThere.status).toBe(200);
    const tombstones = await svc.pool.query('select 1 from contact_tombstones where id = $1', [
      contact.id,
    ]);
    expect(tombstones.rowCount).toBe(0);

    answer = noContent;
    expect((await eraseByExternalId(svc, token, contact.externalId!)).status).toBe(204);
    await expectNotFound(await svc.request('GET', `/v1/contacts/by-id/${contact.id}`, { token }));
  });

  it('when a participant is down, then 503 and the Contact stays', async () => {
    const gone = await startFakeService(noContent);
    await gone.close();
    const down = await startContactsService({
      database: DATABASE,
      deps: { contactDataServiceUrls: [participant.url, gone.url] },
    });
    try {
      const { token, contact } = await arrange(down);
      const res = await eraseById(down, token, contact.id);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      const read = await down.request('GET', `/v1/contacts/by-id/${contact.id}`, { token });
      expect(read.status).toBe(200);
    } finally {
      await down.close();
    }
  });

  it.each([
    { how: 'by id', by: 'id', expected: [204, 204] },
    { how: 'by externalId', by: 'externalId', expected: [204, 404] },
  ] as const)(
    'when one Contact is erased twice at once $how, then the answers are $expected, never a 500',
    async ({ by, expected }) => {
      const { token, contact } = await arrange(svc);
      // The participant holds both calls until both arrived: both requests found the Contact
      // and then race for its row.
      const held: Array<() => void> = [];
      answer = (req, res) => {
        held.push(() => noContent(req, res));
        if (held.length === 2) for (const release of held) release();
      };
      const erase = () =>
        by === 'id'
          ? eraseById(svc, token, contact.id)
          : eraseByExternalId(svc, token, contact.externalId!);
      const statuses = (await Promise.all([erase(), erase()])).map((r) => r.status).sort();
      answer = noContent;
      expect(statuses).toEqual(expected);
      const tombstones = await svc.pool.query('select 1 from contact_tombstones where id = $1', [
        contact.id,
      ]);
      expect(tombstones.rowCount).toBe(1);
    },
  );
});

describe('two erasures by id, the first committing between the second one’s two reads', () => {
  it('when the Contact is gone by the time the second looks it up, then the second answers like a retry (no 404)', async () => {
    const { tenantId, contact } = await arrange(svc);
    const deps = {
      contactDataServices: { baseUrls: [participant.url], serviceToken: SERVICE_TOKEN },
    };
    // The second erasure's pool: right after its tombstone check (none yet), the first erasure
    // runs to its commit; the second then finds no Contact.
    let first: Promise<void> | undefined;
    const pausing = new Proxy(svc.pool, {
      get(target, name, receiver) {
        if (name !== 'query') return Reflect.get(target, name, receiver) as unknown;
        return async (...args: Parameters<typeof target.query>) => {
          const result = await (target.query as (...a: unknown[]) => Promise<unknown>)(...args);
          if (first === undefined && String(args[0]).includes('contact_tombstones')) {
            first = eraseContact({ ...deps, pool: svc.pool }, tenantId, { id: contact.id });
            await first;
          }
          return result;
        };
      },
    });
    await expect(
      eraseContact({ ...deps, pool: pausing }, tenantId, { id: contact.id }),
    ).resolves.toBeUndefined();
    expect(first).toBeDefined();
    const tombstones = await svc.pool.query('select 1 from contact_tombstones where id = $1', [
      contact.id,
    ]);
    expect(tombstones.rowCount).toBe(1);
  });
});
