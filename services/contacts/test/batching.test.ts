// Concurrent upserts share one transaction (group commit), and each stays all or nothing on
// its own: a conflict or a failure answers that upsert alone, its neighbours are written with
// their messages. Batches touching one identity wait for each other before they touch a row.
// Concurrent reads share one statement, each answered from its own Tenant only.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { BatchHold } from '@herald/db';
import { upsertContacts, type ContactUpsert } from '../src/data/contacts-repository.js';
import { contactReads, contactUpserts } from '../src/domain/contacts.js';
import { startContactsService, uniqueEmail, type TestContactsService } from './support.js';

let svc: TestContactsService;
beforeAll(async () => {
  svc = await startContactsService();
});
afterAll(() => svc.close());

async function existing(tenantId: string, token: string, externalId: string) {
  const email = uniqueEmail();
  const res = await svc.request('PUT', `/v1/contacts/${externalId}`, { token, body: { email } });
  expect(res.status).toBe(201);
  return { id: (await res.json<{ id: string }>()).id, email };
}

async function messagesOf(tenantId: string) {
  const { rows } = await svc.pool.query<{ key: string; type: string }>(
    `select key, value::jsonb ->> 'type' as type from outbox
     where value::jsonb ->> 'tenantId' = $1 order by id`,
    [tenantId],
  );
  return rows;
}

const upsertOf = (
  tenantId: string,
  fields: Partial<ContactUpsert> & { externalId: string | null; email: string },
): ContactUpsert => ({
  tenantId,
  newId: randomUUID(),
  messageId: randomUUID(),
  topic: 'herald.contacts.changed',
  headers: {},
  ...fields,
});

describe('upserts written together', () => {
  it('when a conflict shares a batch with a creation and an update, then each gets its own answer and only the writes are announced', async () => {
    const { tenantId, token } = svc.newTenant();
    const owner = await existing(tenantId, token, 'owner');
    const before = await messagesOf(tenantId);
    const hold = new BatchHold();
    const upserts = contactUpserts(svc.pool, { hold });
    hold.hold();

    const answers = Promise.allSettled([
      upserts.byExternalId(tenantId, 'new-1', { email: uniqueEmail() }),
      upserts.byExternalId(tenantId, 'other', { email: owner.email }),
      upserts.byExternalId(tenantId, 'owner', { email: owner.email, name: 'Ada' }),
    ]);
    expect(hold.waiting()).toBe(3);
    hold.release();
    const [created, conflict, updated] = await answers;

    expect(created).toMatchObject({ status: 'fulfilled', value: { created: true } });
    expect(conflict).toMatchObject({ status: 'rejected', reason: { status: 409 } });
    expect(updated).toMatchObject({
      status: 'fulfilled',
      value: { created: false, contact: { id: owner.id, name: 'Ada' } },
    });
    const createdId = created.status === 'fulfilled' ? created.value.contact.id : '';
    expect((await messagesOf(tenantId)).slice(before.length)).toEqual([
      { key: createdId, type: 'contact.created' },
      { key: owner.id, type: 'contact.updated' },
    ]);
    const { rows } = await svc.pool.query(
      'select 1 from contacts where tenant_id = $1 and external_id = $2',
      [tenantId, 'other'],
    );
    expect(rows).toEqual([]);
  });

  it('when one upsert of a call fails in PostgreSQL, then it alone is undone and answered with its SQLSTATE', async () => {
    const { tenantId, token } = svc.newTenant();
    const taken = await existing(tenantId, token, 'taken');
    const first = upsertOf(tenantId, { externalId: 'first', email: uniqueEmail() });
    // A new Contact given an id that exists: its insert violates the primary key.
    const clash = upsertOf(tenantId, {
      externalId: 'clash',
      email: uniqueEmail(),
      newId: taken.id,
    });
    const last = upsertOf(tenantId, { externalId: 'last', email: uniqueEmail() });

    const outcomes = await upsertContacts(svc.pool, [first, clash, last]);

    expect(outcomes.map((o) => o.status)).toEqual(['created', 'failed', 'created']);
    expect(outcomes[1]).toMatchObject({ code: '23505' });
    const { rows } = await svc.pool.query<{ external_id: string }>(
      'select external_id from contacts where tenant_id = $1 order by external_id',
      [tenantId],
    );
    expect(rows.map((r) => r.external_id)).toEqual(['first', 'last', 'taken']);
    expect((await messagesOf(tenantId)).map((m) => m.type)).toEqual([
      'contact.created',
      'contact.created',
      'contact.created',
    ]);
  });

  it('when two calls name the same Contacts in opposite orders, then the second waits on an identity lock before touching a row', async () => {
    const { tenantId, token } = svc.newTenant();
    const x = await existing(tenantId, token, 'x');
    const y = await existing(tenantId, token, 'y');
    const write = (externalId: string, email: string, name: string) =>
      upsertOf(tenantId, { externalId, email, name });
    const first = await svc.pool.connect();
    const second = await svc.pool.connect();
    try {
      await first.query('begin');
      await upsertContacts(first, [write('x', x.email, 'x1'), write('y', y.email, 'y1')]);
      const { rows } = await second.query<{ pid: number }>('select pg_backend_pid() as pid');
      const waiting = upsertContacts(second, [
        write('y', y.email, 'y2'),
        write('x', x.email, 'x2'),
      ]);

      let lock: { locktype: string } | undefined;
      for (let i = 0; i < 200 && lock === undefined; i += 1) {
        const found = await svc.pool.query<{ locktype: string }>(
          'select locktype from pg_locks where pid = $1 and not granted',
          [rows[0]!.pid],
        );
        lock = found.rows[0];
        if (lock === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(lock).toEqual({ locktype: 'advisory' });

      await first.query('commit');
      expect((await waiting).map((o) => o.status)).toEqual(['updated', 'updated']);
    } finally {
      first.release();
      second.release();
    }
    const { rows } = await svc.pool.query<{ name: string }>(
      'select name from contacts where tenant_id = $1 order by external_id',
      [tenantId],
    );
    expect(rows.map((r) => r.name)).toEqual(['x2', 'y2']);
  });
});

describe('reads looked up together', () => {
  it("when reads of two Tenants share a statement, then each gets only its own Tenant's Contact, and a miss or another Tenant's id is a 404", async () => {
    const a = svc.newTenant();
    const b = svc.newTenant();
    const ofA = await existing(a.tenantId, a.token, 'same');
    const ofB = await existing(b.tenantId, b.token, 'same');
    const hold = new BatchHold();
    const reads = contactReads(svc.pool, { hold });
    hold.hold();

    const answers = Promise.allSettled([
      reads.byExternalId(a.tenantId, 'same'),
      reads.byExternalId(b.tenantId, 'same'),
      reads.byExternalId(a.tenantId, 'missing'),
      reads.byId(b.tenantId, ofB.id.toUpperCase()),
      reads.byId(a.tenantId, ofB.id),
      reads.byId(a.tenantId, 'not-a-uuid'),
    ]);
    // The malformed id never waits for a batch.
    expect(hold.waiting()).toBe(5);
    hold.release();
    const [sameA, sameB, missing, idB, idOfBForA, malformed] = await answers;

    expect(sameA).toMatchObject({ status: 'fulfilled', value: { id: ofA.id, email: ofA.email } });
    expect(sameB).toMatchObject({ status: 'fulfilled', value: { id: ofB.id, email: ofB.email } });
    expect(idB).toMatchObject({ status: 'fulfilled', value: { id: ofB.id, tenantId: b.tenantId } });
    for (const refused of [missing, idOfBForA, malformed]) {
      expect(refused).toMatchObject({ status: 'rejected', reason: { status: 404 } });
    }
  });
});
