// The projection consumer applies a fetched batch of messages with as few statements as it can:
// snapshots in a row together, cut where a Contact comes again or an erasure comes between. The
// result must be the projection that applying the messages one at a time, in order, gives. Each
// case applies the same messages both ways, from the same stored state, each in a transaction
// that is rolled back.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { PoolClient } from '@herald/db';
import { TOPICS } from '@herald/messages';
import {
  applyContactIdentityMessages,
  type ContactIdentityMessage,
} from '../../src/identity-projection/contact-identities-consumer.js';
import {
  contactErasedMessage,
  contactSnapshotMessage,
  prepareTestDatabase,
  testPool,
} from '../contact-data-support.js';

// Its own database: nothing else writes its projection.
const DATABASE = 'herald_events_test_identity_batches';
const pool = testPool(DATABASE, 2);

beforeAll(() => prepareTestDatabase(DATABASE));
afterAll(() => pool.end());

const at = (day: number) => `2026-11-${String(day).padStart(2, '0')}T10:00:00.000Z`;

const snapshot = contactSnapshotMessage;
const erased = contactErasedMessage;

/** The erasure's compaction tombstone on the changed topic. */
const tombstone = (contactId: string): ContactIdentityMessage => ({
  topic: TOPICS.contactsChanged,
  key: contactId,
  value: null,
});

interface Projected {
  tenant_id: string;
  contact_id: string;
  external_id_sha256: string | null;
  updated_at: string | null;
  erased: boolean;
}

async function projection(db: PoolClient, tenants: readonly string[]): Promise<Projected[]> {
  const { rows } = await db.query<Projected>(
    `select tenant_id, contact_id, encode(external_id_sha256, 'hex') as external_id_sha256,
            updated_at::text, erased
     from contact_identities where tenant_id = any($1::uuid[])
     order by tenant_id, contact_id`,
    [tenants],
  );
  return rows;
}

/** A client whose statements are counted (begin and rollback aside). */
function counting(client: PoolClient): { db: PoolClient; statements: () => number } {
  let statements = 0;
  const db = new Proxy(client, {
    get(target, property, receiver) {
      if (property !== 'query') return Reflect.get(target, property, receiver) as unknown;
      return (...args: unknown[]) => {
        statements += 1;
        return (target.query as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { db, statements: () => statements };
}

/**
 * The projection of `tenants` after `messages`, applied on top of `before` (messages applied one
 * at a time), either one at a time or as one batch; and how many statements the messages took.
 */
async function applied(
  tenants: readonly string[],
  before: readonly ContactIdentityMessage[],
  messages: readonly ContactIdentityMessage[],
  how: 'one at a time' | 'as one batch',
): Promise<{ rows: Projected[]; statements: number }> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    for (const m of before) await applyContactIdentityMessages(client, [m]);
    const { db, statements } = counting(client);
    if (how === 'as one batch') await applyContactIdentityMessages(db, messages);
    else for (const m of messages) await applyContactIdentityMessages(db, [m]);
    return { rows: await projection(client, tenants), statements: statements() };
  } finally {
    await client.query('rollback');
    client.release();
  }
}

describe('a batch of contact identity messages', () => {
  it('when a batch repeats Contacts, replays older snapshots, erases and tombstones between snapshots and holds an unreadable message, then it ends as the messages applied one at a time', async () => {
    const [tenant, other] = [randomUUID(), randomUUID()];
    const [a, b, c, d, e, f] = [
      randomUUID(),
      randomUUID(),
      randomUUID(),
      randomUUID(),
      randomUUID(),
      randomUUID(),
    ];
    const before = [
      snapshot(tenant, e, at(15), 'ext-e'),
      snapshot(tenant, f, at(2)),
      erased(tenant, f),
    ];
    const messages: ContactIdentityMessage[] = [
      snapshot(tenant, a, at(3)),
      snapshot(other, a, at(3), 'ext-a-other'),
      snapshot(tenant, b, at(3), 'ext-b'),
      // a again, upper case: the same Contact; it gains its externalId.
      snapshot(tenant, a.toUpperCase(), at(4), 'ext-a'),
      // An older snapshot replayed after a newer one changes nothing.
      snapshot(tenant, a, at(2)),
      erased(tenant, b),
      snapshot(tenant, b, at(5), 'ext-b'),
      snapshot(tenant, c, at(3), 'ext-c'),
      tombstone(c),
      snapshot(tenant, d, at(6), 'ext-d'),
      { topic: TOPICS.contactsChanged, key: d, value: '{not json' },
      snapshot(tenant, d, at(5)),
      snapshot(tenant, e, at(10)),
      snapshot(tenant, f, at(9), 'ext-f'),
    ];

    const one = await applied([tenant, other], before, messages, 'one at a time');
    const batch = await applied([tenant, other], before, messages, 'as one batch');

    expect(batch.rows).toEqual(one.rows);
    const row = (tenantId: string, contactId: string) =>
      one.rows.find((r) => r.tenant_id === tenantId && r.contact_id === contactId);
    expect(row(tenant, a)).toMatchObject({ erased: false, updated_at: '2026-11-04 10:00:00+00' });
    expect(row(tenant, a)?.external_id_sha256).not.toBeNull();
    expect(row(other, a)?.erased).toBe(false);
    expect(row(tenant, b)).toMatchObject({ erased: true, external_id_sha256: null });
    expect(row(tenant, c)).toMatchObject({ erased: true, external_id_sha256: null });
    expect(row(tenant, d)).toMatchObject({ erased: false, updated_at: '2026-11-06 10:00:00+00' });
    expect(row(tenant, e)?.updated_at).toBe('2026-11-15 10:00:00+00');
    expect(row(tenant, f)?.erased).toBe(true);
    // One statement per message (the unreadable one skipped), against eight: [a, a of other, b]
    // [A] [a] (erase b) [b, c] (tombstone c) [d] [d, e, f].
    expect(one.statements).toBe(messages.length - 1);
    expect(batch.statements).toBe(8);
  });

  it('when a batch names each Contact once, then its snapshots are one statement', async () => {
    const tenant = randomUUID();
    const messages = Array.from({ length: 200 }, (_, i) =>
      snapshot(tenant, randomUUID(), at(3), i % 2 === 0 ? `ext-${i}` : undefined),
    );

    const one = await applied([tenant], [], messages, 'one at a time');
    const batch = await applied([tenant], [], messages, 'as one batch');

    expect(batch.rows).toEqual(one.rows);
    expect(batch.rows).toHaveLength(200);
    expect(batch.statements).toBe(1);
  });
});
