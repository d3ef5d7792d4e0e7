// Concurrent upserts share one transaction (group commit), and each stays all or nothing on
// its own: a conflict or a failure answers that upsert alone, its neighbours are written with
// their messages. Batches touching one identity wait for each other before they touch a row.
// Concurrent reads share one statement, each answered from its own Tenant only.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { BatchHold, createPool } from '@herald/db';
import { TEST_POSTGRES_URL } from '@herald/testing';
import { upsertContacts, type ContactUpsert } from '../../src/data/contacts-repository.js';
import { contactReads, contactUpserts } from '../../src/domain/contacts.js';
import { startContactsService, uniqueEmail, type TestContactsService } from '../support.js';

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
      first.release(true);
      second.release();
    }
    const { rows } = await svc.pool.query<{ name: string }>(
      'select name from contacts where tenant_id = $1 order by external_id',
      [tenantId],
    );
    expect(rows.map((r) => r.name)).toEqual(['x2', 'y2']);
  });
});

describe('row locks of a batch', () => {
  it('when a batch must wait for a Contact another batch holds, then it holds no other Contact meanwhile: it takes every Contact its upserts can touch, in id order, before it writes', async () => {
    const { tenantId, token } = svc.newTenant();
    const pair = [await existing(tenantId, token, 'p'), await existing(tenantId, token, 'q')];
    const [low, high] = pair.sort((a, b) => (a.id < b.id ? -1 : 1)) as [
      (typeof pair)[0],
      (typeof pair)[0],
    ];
    const externalIdOf = async (id: string) =>
      (
        await svc.pool.query<{ external_id: string }>(
          'select external_id from contacts where id = $1',
          [id],
        )
      ).rows[0]!.external_id;
    const blocker = await svc.pool.connect();
    const batch = await svc.pool.connect();
    try {
      // Another batch, its transaction still open, that upserted `low`.
      await blocker.query('begin');
      // By its externalId, moving it to a new email: identities the batch below does not name,
      // so only the Contact's own lock can make that batch wait before it touches a row.
      await upsertContacts(blocker, [
        upsertOf(tenantId, { externalId: await externalIdOf(low.id), email: uniqueEmail() }),
      ]);
      const { rows } = await batch.query<{ pid: number }>('select pg_backend_pid() as pid');
      // In arrival order the first upsert touches `high`, the second `low`, which is held.
      const running = upsertContacts(batch, [
        upsertOf(tenantId, { externalId: await externalIdOf(high.id), email: uniqueEmail() }),
        upsertOf(tenantId, { externalId: null, email: low.email, name: 'by email' }),
      ]);
      let waiting = false;
      for (let i = 0; i < 200 && !waiting; i += 1) {
        const found = await svc.pool.query(
          'select 1 from pg_locks where pid = $1 and not granted',
          [rows[0]!.pid],
        );
        waiting = found.rows.length > 0;
        if (!waiting) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(waiting).toBe(true);

      // `high` is free: another writer is not held up by a batch that waits.
      await expect(
        svc.pool.query('select 1 from contacts where id = $1 for update nowait', [high.id]),
      ).resolves.toMatchObject({ rowCount: 1 });

      await blocker.query('commit');
      // `low` left the email meanwhile, so the upsert by that email makes a new Contact.
      expect((await running).map((o) => o.status)).toEqual(['updated', 'created']);
    } finally {
      // Destroyed, not returned: a failed test must not leave its transaction open in the pool.
      blocker.release(true);
      batch.release();
    }
  });
});

describe('a batch the statement timeout cancels', () => {
  it('when an upsert waits past the statement timeout, then 503 and nothing changed', async () => {
    const { tenantId, token } = svc.newTenant();
    const contact = await existing(tenantId, token, 'slow');
    const { rows: current } = await svc.pool.query<{ name: string }>(
      'select current_database() as name',
    );
    const impatient = createPool({
      connectionString: `${TEST_POSTGRES_URL}/${current[0]!.name}`,
      applicationName: 'contacts-batching-test',
      statementTimeoutMillis: 200,
    });
    const blocker = await svc.pool.connect();
    try {
      await blocker.query('begin');
      await blocker.query('select 1 from contacts where id = $1 for update', [contact.id]);
      const upserts = contactUpserts(impatient);

      await expect(
        upserts.byExternalId(tenantId, 'slow', { email: contact.email, name: 'Late' }),
      ).rejects.toMatchObject({ status: 503, code: 'service_unavailable' });
      await blocker.query('commit');
    } finally {
      // Destroyed, not returned: a failed test must not leave its transaction open in the pool.
      blocker.release(true);
      await impatient.end();
    }
    const { rows } = await svc.pool.query('select name from contacts where id = $1', [contact.id]);
    expect(rows).toEqual([{ name: null }]);
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

describe('the plan of batched reads', () => {
  it('when reads are looked up together, then each goes through its unique index, never a scan of the table', async () => {
    const { tenantId, token } = svc.newTenant();
    const contact = await existing(tenantId, token, 'planned');
    const statements: Array<{ text: string; values: unknown[] }> = [];
    const recorded = {
      query: (config: { text: string; values: unknown[] }) => {
        statements.push(config);
        return svc.pool.query(config);
      },
    } as unknown as typeof svc.pool;
    // A Tenant of some size, and statistics, as a live database has them: on a handful of rows
    // the planner may as well scan the Tenant's rows through another index.
    await svc.pool.query(
      `insert into contacts (id, tenant_id, external_id, email, email_key)
       select gen_random_uuid(), $1, 'bulk-' || n, 'bulk-' || n || '@example.com',
              'bulk-' || n || '@example.com'
       from generate_series(1, 500) as n`,
      [tenantId],
    );
    await svc.pool.query('analyze contacts');
    const reads = contactReads(recorded);
    await reads.byExternalId(tenantId, 'planned');
    await reads.byId(tenantId, contact.id);
    expect(statements).toHaveLength(2);

    // Sequential scans off: a plan that can only scan the table still shows one.
    const client = await svc.pool.connect();
    try {
      await client.query('set enable_seqscan = off');
      const plans = [];
      for (const statement of statements) {
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(
          `explain ${statement.text}`,
          statement.values,
        );
        plans.push(rows.map((r) => r['QUERY PLAN']).join('\n'));
      }
      expect(plans[0]).toMatch(
        /Index Scan using contacts_tenant_external_id_key on contacts[^\n]*\n\s*Index Cond: \(\(tenant_id = l\.tenant_id\) AND \(external_id = l\.value\)\)/,
      );
      expect(plans[1]).toMatch(/Index Scan using contacts_pkey/);
      for (const plan of plans) expect(plan).not.toMatch(/Seq Scan on contacts/);
    } finally {
      await client.query('reset enable_seqscan');
      client.release();
    }
  });
});
