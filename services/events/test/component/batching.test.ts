// Recording in batches: concurrent requests share one transaction, each inside its own
// subtransaction. The tests hold the batcher so that several requests land in one batch (their
// Events then share one received_at, the transaction's time), and check that each request stays
// all or nothing and is answered on its own, and what a failure of the whole batch gives each.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { contactLockKey } from '../../src/export-erasure/data/erasure-fence.js';
import { hashDedupKey } from '../../src/recording/dedup-key.js';
import { BatchHold } from '../../src/recording/recording-batcher.js';
import {
  SERVICE_TOKEN,
  startEventsService,
  storedState,
  type StartOptions,
  type TestEventsService,
} from '../support.js';

// Its own database: the triggers made here fire on every insert into its tables.
const DATABASE = 'herald_events_test_batching';
const OCCURRED = '2026-03-04T05:06:07.123Z';

let svc: TestEventsService;
let hold: BatchHold;

async function startHeld(options: StartOptions = {}) {
  const batchHold = new BatchHold();
  const service = await startEventsService({
    database: DATABASE,
    poolMax: 20,
    ...options,
    deps: { recording: { hold: batchHold } },
  });
  return { service, batchHold };
}

beforeAll(async () => {
  ({ service: svc, batchHold: hold } = await startHeld());
});
afterAll(() => svc.close());

const event = (contactId: string, dedupKey?: string, eventName = 'x') => ({
  contactId,
  eventName,
  occurredAt: OCCURRED,
  ...(dedupKey === undefined ? {} : { dedupKey }),
});

async function tenantWithContacts(service: TestEventsService, count: number) {
  const tenant = service.newTenant();
  const contacts = [];
  for (let i = 0; i < count; i += 1) {
    contacts.push(await service.contacts.createContact(tenant.tenantId));
  }
  return { ...tenant, contacts };
}

async function untilQueued(batchHold: BatchHold, count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (batchHold.waiting() < count) {
    if (Date.now() > deadline) throw new Error('the requests never reached the batcher');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Sends the bodies at once while the batcher is held, waits until every one is queued, then
 * lets them go as one batch; the answers, in order. Concurrent requests reach the queue in no
 * set order; with `inOrder`, each is sent once the one before it is queued.
 */
async function inOneBatch(
  batchHold: BatchHold,
  send: () => Promise<Response>[],
): Promise<Response[]> {
  batchHold.hold();
  let answers: Promise<Response[]>;
  try {
    const sent = send();
    answers = Promise.all(sent);
    await untilQueued(batchHold, sent.length);
  } finally {
    batchHold.release();
  }
  return answers;
}

/** As inOneBatch, the requests queued in the order given. */
async function inOneBatchInOrder(
  batchHold: BatchHold,
  sends: Array<() => Promise<Response>>,
): Promise<Response[]> {
  batchHold.hold();
  const sent: Promise<Response>[] = [];
  try {
    for (const send of sends) {
      sent.push(send());
      await untilQueued(batchHold, sent.length);
    }
  } finally {
    batchHold.release();
  }
  return Promise.all(sent);
}

const receivedAts = (events: readonly { received_at: Date }[]) =>
  new Set(events.map((e) => e.received_at.getTime()));

async function withTrigger(service: TestEventsService, body: string, run: () => Promise<void>) {
  const fn = `test_${randomUUID().replaceAll('-', '')}`;
  await service.pool.query(
    `create function ${fn}() returns trigger language plpgsql as $$ begin ${body} return new; end $$`,
  );
  await service.pool.query(
    `create trigger ${fn} before insert on events for each row execute function ${fn}()`,
  );
  try {
    await run();
  } finally {
    await service.pool.query(`drop trigger ${fn} on events`);
    await service.pool.query(`drop function ${fn}()`);
  }
}

describe('requests of one batch', () => {
  it('when one request of a batch is about an erased Contact, then it alone is refused (422, its listing) and the others are recorded', async () => {
    const { tenantId, token, contacts } = await tenantWithContacts(svc, 3);
    const [a, erased, c] = contacts as [
      (typeof contacts)[0],
      (typeof contacts)[0],
      (typeof contacts)[0],
    ];
    const erasure = await fetch(
      `${svc.url}/internal/v1/tenants/${tenantId}/contacts/${erased.id}/erase`,
      { method: 'POST', headers: { authorization: `Bearer ${SERVICE_TOKEN}` } },
    );
    expect(erasure.status).toBe(204);

    const answers = await inOneBatch(hold, () => [
      svc.record('by-contact-id', token, [event(a.id, 'ka'), event(a.id)]),
      svc.record('by-contact-id', token, [event(a.id, 'kb'), event(erased.id, 'kb2', 'gone')]),
      svc.record('by-contact-id', token, event(c.id, 'kc')),
    ]);

    expect(answers.map((r) => r.status)).toEqual([202, 422, 202]);
    expect(await answers[0]!.json()).toStrictEqual({ accepted: 2 });
    expect(await answers[1]!.json()).toMatchObject({
      code: 'unresolved_identity',
      unresolved: [
        {
          index: 1,
          eventName: 'gone',
          contactId: erased.id,
          contactExternalId: null,
          contactEmail: null,
          organizationExternalId: null,
        },
      ],
    });
    expect(await answers[2]!.json()).toStrictEqual({ accepted: 1 });
    const { events, claims, outbox, names } = await storedState(svc.pool, tenantId);
    expect(events.map((e) => e.dedup_key).sort()).toEqual(['ka', 'kc', null]);
    expect(receivedAts(events).size).toBe(1);
    expect(claims.map((c) => c.dedup_key).sort()).toEqual(['ka', 'kc'].map(hashDedupKey).sort());
    expect(outbox).toHaveLength(3);
    expect(names.map((n) => n.name)).toEqual(['x']);
  });

  it('when one request of a batch fails inside its transaction, then it alone answers 500, its claims roll back, and a neighbour with the same key records it', async () => {
    const { tenantId, token, contacts } = await tenantWithContacts(svc, 1);
    const contact = contacts[0]!;

    await withTrigger(
      svc,
      `if new.tenant_id = '${tenantId}' and new.event_name = 'explode' then
         raise exception 'test failure';
       end if;`,
      async () => {
        const answers = await inOneBatch(hold, () => [
          svc.record('by-contact-id', token, event(contact.id, 'before')),
          svc.record('by-contact-id', token, [
            event(contact.id, 'shared'),
            event(contact.id, undefined, 'explode'),
          ]),
          svc.record('by-contact-id', token, event(contact.id, 'shared', 'after')),
        ]);

        expect(answers.map((r) => r.status)).toEqual([202, 500, 202]);
        expect(await answers[1]!.json()).toMatchObject({ code: 'internal_error' });
      },
    );

    const { events, claims, outbox, names } = await storedState(svc.pool, tenantId);
    expect(events.map((e) => [e.event_name, e.dedup_key]).sort()).toEqual([
      ['after', 'shared'],
      ['x', 'before'],
    ]);
    expect(receivedAts(events).size).toBe(1);
    const after = events.find((e) => e.event_name === 'after')!;
    expect(claims.find((c) => c.dedup_key === hashDedupKey('shared'))?.event_id).toBe(after.id);
    expect(outbox).toHaveLength(2);
    expect(names.map((n) => n.name)).toEqual(['after', 'x']);
  });

  it('when requests of one batch share a dedupKey, then the first queued records it and every answer is 202', async () => {
    const { tenantId, token, contacts } = await tenantWithContacts(svc, 1);
    const contact = contacts[0]!;

    const answers = await inOneBatchInOrder(
      hold,
      ['first', 'second', 'third'].map(
        (name) => () =>
          svc.record('by-contact-id', token, [
            event(contact.id, 'same', name),
            event(contact.id, `own-${name}`, name),
          ]),
      ),
    );

    expect(answers.map((r) => r.status)).toEqual([202, 202, 202]);
    for (const answer of answers) expect(await answer.json()).toStrictEqual({ accepted: 2 });
    const { events, claims, outbox } = await storedState(svc.pool, tenantId);
    expect(events.map((e) => [e.dedup_key, e.event_name]).sort()).toEqual([
      ['own-first', 'first'],
      ['own-second', 'second'],
      ['own-third', 'third'],
      ['same', 'first'],
    ]);
    expect(receivedAts(events).size).toBe(1);
    expect(claims).toHaveLength(4);
    expect(outbox).toHaveLength(4);
  });

  it("when an erasure holds one request's Contact, then the rest of the batch is answered without waiting for it, and that request waits alone and is refused", async () => {
    const { tenantId, token, contacts } = await tenantWithContacts(svc, 2);
    const [free, erasing] = contacts as [(typeof contacts)[0], (typeof contacts)[0]];
    const erasure = await svc.pool.connect();
    try {
      await erasure.query('begin');
      await erasure.query('select pg_advisory_xact_lock($1::bigint)', [
        contactLockKey(tenantId, erasing.id),
      ]);
      await erasure.query('insert into erased_contacts (tenant_id, contact_id) values ($1, $2)', [
        tenantId,
        erasing.id,
      ]);

      const answers = inOneBatch(hold, () => [
        svc.record('by-contact-id', token, event(free.id, 'a')),
        svc.record('by-contact-id', token, event(erasing.id, 'b')),
        svc.record('by-contact-id', token, event(free.id, 'c')),
      ]);
      // The neighbours are recorded while the erasure still runs.
      const deadline = Date.now() + 10_000;
      while ((await storedState(svc.pool, tenantId)).events.length < 2) {
        if (Date.now() > deadline) throw new Error('the neighbours were not recorded');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await erasure.query('commit');
      const [a, b, c] = await answers;

      expect([a!.status, b!.status, c!.status]).toEqual([202, 422, 202]);
      const { events, claims } = await storedState(svc.pool, tenantId);
      expect(events.map((e) => e.dedup_key).sort()).toEqual(['a', 'c']);
      expect(claims.map((cl) => cl.dedup_key).sort()).toEqual(['a', 'c'].map(hashDedupKey).sort());
    } finally {
      erasure.release();
    }
  });
});

describe('failures of a whole batch', () => {
  it('when the batch hits a serialization failure, then it runs again and every request is recorded exactly once', async () => {
    const { tenantId, token, contacts } = await tenantWithContacts(svc, 1);
    const contact = contacts[0]!;
    const sequence = `fail_once_${tenantId.replaceAll('-', '')}`;
    await svc.pool.query(`create sequence ${sequence}`);
    try {
      await withTrigger(
        svc,
        `if new.tenant_id = '${tenantId}' and nextval('${sequence}') = 1 then
           raise exception 'test serialization failure' using errcode = '40001';
         end if;`,
        async () => {
          const answers = await inOneBatch(hold, () => [
            svc.record('by-contact-id', token, event(contact.id, 'k1')),
            svc.record('by-contact-id', token, [event(contact.id), event(contact.id)]),
            svc.record('by-contact-id', token, event(contact.id, 'k1')),
          ]);

          expect(answers.map((r) => r.status)).toEqual([202, 202, 202]);
        },
      );
      const { rows } = await svc.pool.query<{ last_value: string }>(
        `select last_value from ${sequence}`,
      );
      // The first attempt failed on its first row; the second wrote all three rows.
      expect(Number(rows[0]!.last_value)).toBe(4);
    } finally {
      await svc.pool.query(`drop sequence ${sequence}`);
    }

    const { events, claims, outbox } = await storedState(svc.pool, tenantId);
    expect(events.map((e) => e.dedup_key).sort()).toEqual(['k1', null, null]);
    expect(claims).toHaveLength(1);
    expect(outbox).toHaveLength(3);
  });

  it('when the batch fails as a whole for one request (its catalog entry), then each request runs alone: that one answers 500, the others are recorded once', async () => {
    const { tenantId, token, contacts } = await tenantWithContacts(svc, 1);
    const contact = contacts[0]!;
    const fn = `test_${randomUUID().replaceAll('-', '')}`;
    // The catalog is written once for the whole batch, outside the requests' subtransactions.
    await svc.pool.query(`create function ${fn}() returns trigger language plpgsql as $$
      begin
        if new.tenant_id = '${tenantId}' and new.name = 'poison' then
          raise exception 'test catalog failure';
        end if;
        return new;
      end $$`);
    await svc.pool.query(
      `create trigger ${fn} before insert on event_names for each row execute function ${fn}()`,
    );
    try {
      const answers = await inOneBatch(hold, () => [
        svc.record('by-contact-id', token, event(contact.id, 'k1')),
        svc.record('by-contact-id', token, event(contact.id, 'k2', 'poison')),
        svc.record('by-contact-id', token, [event(contact.id), event(contact.id, 'k1')]),
      ]);

      expect(answers.map((r) => r.status)).toEqual([202, 500, 202]);
    } finally {
      await svc.pool.query(`drop trigger ${fn} on event_names`);
      await svc.pool.query(`drop function ${fn}()`);
    }
    const { events, claims, outbox, names } = await storedState(svc.pool, tenantId);
    expect(events.map((e) => e.dedup_key).sort()).toEqual(['k1', null]);
    expect(claims.map((c) => c.dedup_key)).toEqual([hashDedupKey('k1')]);
    expect(outbox).toHaveLength(2);
    expect(names.map((n) => n.name)).toEqual(['x']);
  });

  it('when the batch runs past the statement timeout, then every request of it answers 503 with Retry-After, nothing of it is stored, and resending records it', async () => {
    const { service: slow, batchHold } = await startHeld({ statementTimeoutMs: 500 });
    const blocker = await slow.pool.connect();
    try {
      const { tenantId, token, contacts } = await tenantWithContacts(slow, 1);
      const contact = contacts[0]!;
      // An uncommitted claim of one request's key: its insert waits until the timeout.
      await blocker.query('begin');
      await blocker.query(
        'insert into dedup_claims (tenant_id, dedup_key, event_id) values ($1, $2, $3)',
        [tenantId, hashDedupKey('blocked'), randomUUID()],
      );
      const send = () => [
        slow.record('by-contact-id', token, event(contact.id, 'free')),
        slow.record('by-contact-id', token, event(contact.id, 'blocked')),
        slow.record('by-contact-id', token, event(contact.id)),
      ];

      const answers = await inOneBatch(batchHold, send);

      expect(answers.map((r) => r.status)).toEqual([503, 503, 503]);
      for (const answer of answers) {
        expect(answer.headers.get('retry-after')).toBeTruthy();
        expect(await answer.json()).toMatchObject({ code: 'service_unavailable' });
      }
      expect(await storedState(slow.pool, tenantId)).toStrictEqual({
        events: [],
        claims: [],
        names: [],
        outbox: [],
      });

      await blocker.query('rollback');
      const again = await inOneBatch(batchHold, send);

      expect(again.map((r) => r.status)).toEqual([202, 202, 202]);
      const { events, outbox } = await storedState(slow.pool, tenantId);
      expect(events.map((e) => e.dedup_key).sort()).toEqual(['blocked', 'free', null]);
      expect(outbox).toHaveLength(3);
    } finally {
      await blocker.query('rollback');
      blocker.release();
      await slow.close();
    }
  });
});

describe('bodies in flight (RECORDING_MAX_BODY_BYTES_IN_FLIGHT)', () => {
  it('when the requests in hand fill the budget, then the next waits before its body is read and is recorded once the earlier are answered', async () => {
    const batchHold = new BatchHold();
    const narrow = await startEventsService({
      database: DATABASE,
      deps: { recording: { hold: batchHold }, maxBodyBytesInFlight: 1 },
    });
    try {
      const { tenantId, token, contacts } = await tenantWithContacts(narrow, 1);
      const contact = contacts[0]!;
      batchHold.hold();
      const first = narrow.record('by-contact-id', token, event(contact.id, 'first'));
      await untilQueued(batchHold, 1);
      const second = narrow.record('by-contact-id', token, event(contact.id, 'second'));
      // The second never reaches the batcher while the first is in hand.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(batchHold.waiting()).toBe(1);

      batchHold.release();
      expect((await first).status).toBe(202);
      expect((await second).status).toBe(202);
      const { events } = await storedState(narrow.pool, tenantId);
      expect(events.map((e) => e.dedup_key)).toEqual(['first', 'second']);
      // Two transactions, one after the other.
      expect(receivedAts(events).size).toBe(2);
    } finally {
      await narrow.close();
    }
  });
});

describe('publishing behind (RECORDING_PUBLISH_LAG_LIMIT_MS)', () => {
  it('when the pace asks for a gap, then batches run one at a time, each the gap after the last, and every request is recorded', async () => {
    const batchHold = new BatchHold();
    const paced = await startEventsService({
      database: DATABASE,
      deps: { recording: { hold: batchHold, maxBatchEvents: 1, pace: { gapMs: () => 150 } } },
    });
    try {
      const { tenantId, token, contacts } = await tenantWithContacts(paced, 1);
      const answers = await inOneBatch(batchHold, () =>
        ['a', 'b', 'c'].map((key) =>
          paced.record('by-contact-id', token, event(contacts[0]!.id, key)),
        ),
      );

      expect(answers.map((r) => r.status)).toEqual([202, 202, 202]);
      const { events } = await storedState(paced.pool, tenantId);
      const times = events.map((e) => e.received_at.getTime()).sort((a, b) => a - b);
      expect(times).toHaveLength(3);
      expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(150);
      expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(150);
    } finally {
      await paced.close();
    }
  });
});
