// The contact identity projection: the relay process fills it from herald.contacts.changed and
// herald.contacts.erased (written by the real contacts process these tests run), recording
// answers from it what it knows for sure, and asks the contacts service, in one call, everything
// else. The fallback below is the real HTTP client, counted: each of its calls is one request to
// the contacts service.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { TOPICS } from '@herald/messages';
import { contactsIdentityResolver } from '../../src/identity-projection/clients/contacts-identity-resolver.js';
import { projectedIdentityResolver } from '../../src/identity-projection/projected-identity-resolver.js';
import { loadRelayConfig } from '../../src/config.js';
import { externalIdDigest } from '../../src/identity-projection/data/contact-identities.js';
import type { IdentityQuery, IdentityResolver } from '../../src/recording/identities.js';
import {
  applyContactIdentityMessages,
  type ContactIdentityMessage,
} from '../../src/identity-projection/contact-identities-consumer.js';
import { startRelayProcess, type RelayProcess } from '../../src/relay/relay-process.js';
import {
  contactErasedMessage,
  contactSnapshotMessage,
  databaseUrl,
  KAFKA_BROKERS,
  silentLogger,
  testPool,
} from '../contact-data-support.js';
import {
  SERVICE_TOKEN,
  startEventsService,
  type TestContact,
  type TestEventsService,
} from '../support.js';

// Its own database: the relay process here publishes and deletes its outbox rows.
const DATABASE = 'herald_events_test_identities';
/** How soon a Contact written to the contacts service must be resolvable here. */
const FRESHNESS_BOUND_MS = 5_000;
const occurredAt = '2026-11-21T10:00:00Z';

const pool = testPool(DATABASE);
let service: TestEventsService;
let relay: RelayProcess | undefined;
let contacts: IdentityResolver | undefined;
/** Every call the resolver made to the contacts service, with its Tenant and queries. */
const calls: Array<{ tenantId: string; queries: IdentityQuery[] }> = [];
const callsOf = (tenantId: string) => calls.filter((c) => c.tenantId === tenantId);

const fallback: IdentityResolver = (tenantId, queries) => {
  calls.push({ tenantId, queries: [...queries] });
  contacts ??= contactsIdentityResolver({
    contactsUrl: service.contacts.url,
    serviceToken: SERVICE_TOKEN,
  });
  return contacts(tenantId, queries);
};

async function startRelay(): Promise<RelayProcess> {
  const config = loadRelayConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl(DATABASE),
    KAFKA_BROKERS: KAFKA_BROKERS.join(','),
  });
  relay = await startRelayProcess(config, { logger: silentLogger(), pollIntervalMs: 50 });
  return relay;
}

async function stopRelay(): Promise<void> {
  await relay?.close();
  relay = undefined;
}

async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface ProjectedRow {
  external_id_sha256: Buffer | null;
  updated_at: Date | null;
  erased: boolean;
}

async function projected(tenantId: string, contactId: string): Promise<ProjectedRow | undefined> {
  const { rows } = await pool.query<ProjectedRow>(
    `select external_id_sha256, updated_at, erased from contact_identities
     where tenant_id = $1 and contact_id = $2`,
    [tenantId, contactId],
  );
  return rows[0];
}

const waitUntilProjected = (tenantId: string, contactId: string, timeoutMs?: number) =>
  waitUntil(
    async () => (await projected(tenantId, contactId))?.erased === false,
    'the Contact is projected',
    timeoutMs,
  );

async function storedContactIds(tenantId: string): Promise<Array<string | null>> {
  const { rows } = await service.pool.query<{ contact_id: string | null }>(
    'select contact_id from events where tenant_id = $1 order by received_at, event_name',
    [tenantId],
  );
  return rows.map((r) => r.contact_id);
}

beforeAll(async () => {
  service = await startEventsService({
    database: DATABASE,
    // The contacts service's erasure calls this service's internal route, as in production.
    contactDataSeam: true,
    deps: { resolveIdentities: projectedIdentityResolver({ pool, fallback }) },
  });
});

afterAll(async () => {
  await stopRelay();
  await service?.close();
  await pool.end();
});

/** Filled by the first test, projected by the second. */
let early: { tenantId: string; token: string; contact: TestContact };

describe('fallback to the contacts service', () => {
  test('when a Contact was created a moment ago and the projection has not seen it, then its Events are recorded through one call to contacts per request, and an unknown one is refused by contacts', async () => {
    const { tenantId, token } = service.newTenant();
    const contact = await service.contacts.createContact(tenantId, {
      externalId: `early-${randomUUID()}`,
    });
    early = { tenantId, token, contact };
    // No relay runs yet: nothing can have been projected.
    expect(await projected(tenantId, contact.id)).toBeUndefined();

    const byId = await service.record('by-contact-id', token, [
      { contactId: contact.id.toUpperCase(), eventName: 'A', occurredAt },
    ]);
    const byExternalId = await service.record('by-external-id', token, {
      contactExternalId: contact.externalId,
      eventName: 'B',
      occurredAt,
    });
    const unknown = await service.record('by-contact-id', token, {
      contactId: randomUUID(),
      eventName: 'C',
      occurredAt,
    });

    expect([byId.status, byExternalId.status, unknown.status]).toEqual([202, 202, 422]);
    expect(callsOf(tenantId)).toHaveLength(3);
    expect(await storedContactIds(tenantId)).toEqual([contact.id, contact.id]);
  });
});

describe('the projection', () => {
  test('when the relay process runs, then it catches up with the topics, and a Contact written to the contacts service becomes resolvable here within the bound', async () => {
    await startRelay();
    // Catching up: the Contact created before the relay started arrives too.
    await waitUntilProjected(early.tenantId, early.contact.id);

    const { tenantId } = service.newTenant();
    const started = Date.now();
    const contact = await service.contacts.createContact(tenantId, {
      externalId: `fresh-${randomUUID()}`,
    });
    await waitUntilProjected(tenantId, contact.id, FRESHNESS_BOUND_MS);
    const freshnessMs = Date.now() - started;

    process.stderr.write(`contact identity projection: projected ${freshnessMs} ms after PUT\n`);
    expect(freshnessMs).toBeLessThan(FRESHNESS_BOUND_MS);
    const row = await projected(tenantId, contact.id);
    expect(row?.external_id_sha256?.equals(externalIdDigest(contact.externalId!))).toBe(true);
  });

  test('when every identity of a request is projected, then it is recorded without any call to the contacts service', async () => {
    const { tenantId, token } = early;
    const before = callsOf(tenantId).length;
    const other = await service.contacts.createContact(tenantId);
    await waitUntilProjected(tenantId, other.id);

    const byId = await service.record('by-contact-id', token, [
      { contactId: early.contact.id, eventName: 'D', occurredAt },
      { contactId: other.id.toUpperCase(), eventName: 'E', occurredAt },
    ]);
    const byExternalId = await service.record('by-external-id', token, {
      contactExternalId: early.contact.externalId,
      eventName: 'F',
      occurredAt,
    });

    expect([byId.status, byExternalId.status]).toEqual([202, 202]);
    expect(callsOf(tenantId)).toHaveLength(before);
    expect((await storedContactIds(tenantId)).slice(2)).toEqual([
      early.contact.id,
      other.id,
      early.contact.id,
    ]);
  });

  test('when some identities of a request are not projected, then one call asks contacts only for those, and its answers keep their places', async () => {
    const { tenantId, token } = early;
    const before = callsOf(tenantId).length;
    const missing = randomUUID();

    const res = await service.record('by-contact-id', token, [
      { contactId: early.contact.id, eventName: 'G', occurredAt },
      { contactId: missing, eventName: 'H', occurredAt },
      { contactId: 'not-a-uuid', eventName: 'I', occurredAt },
    ]);

    expect(res.status).toBe(422);
    const body = await res.json<{ unresolved: Array<{ index: number }> }>();
    expect(body.unresolved.map((i) => i.index)).toEqual([1, 2]);
    expect(callsOf(tenantId).slice(before)).toEqual([
      { tenantId, queries: [{ contactId: missing }, { contactId: 'not-a-uuid' }] },
    ]);
  });

  test('when Events name a projected Contact by email, or an organization, then the contacts service is asked', async () => {
    const { tenantId, token, contact } = early;
    await service.contacts.createOrganization(tenantId, 'acme');
    const before = callsOf(tenantId).length;

    const byEmail = await service.record('by-email', token, {
      contactEmail: contact.email,
      eventName: 'J',
      occurredAt,
    });
    const byOrganization = await service.record('by-organization', token, {
      organizationExternalId: 'acme',
      contactId: contact.id,
      eventName: 'K',
      occurredAt,
    });

    expect([byEmail.status, byOrganization.status]).toEqual([202, 202]);
    expect(callsOf(tenantId).slice(before)).toEqual([
      { tenantId, queries: [{ contactEmail: contact.email }] },
      { tenantId, queries: [{ contactId: contact.id, organizationExternalId: 'acme' }] },
    ]);
  });
});

describe('organizations known to exist', () => {
  test('when contacts once answered that an organization exists, then later Events naming it ask contacts only for what else they name, and an organization it denied is asked again', async () => {
    const { tenantId, token, contact } = early;
    await service.contacts.createOrganization(tenantId, 'known-org');
    const other = service.newTenant();
    await service.contacts.createOrganization(other.tenantId, 'known-org');
    const before = callsOf(tenantId).length;
    const record = (body: Record<string, unknown>) =>
      service.record('by-organization', token, { eventName: 'O', occurredAt, ...body });

    const statuses = [
      (await record({ organizationExternalId: 'known-org' })).status,
      (await record({ organizationExternalId: 'known-org' })).status,
      (await record({ organizationExternalId: 'known-org', contactId: contact.id })).status,
      (await record({ organizationExternalId: 'no-such-org' })).status,
      (await record({ organizationExternalId: 'no-such-org' })).status,
    ];
    const stranger = await service.record('by-organization', other.token, {
      organizationExternalId: 'known-org',
      eventName: 'O',
      occurredAt,
    });

    expect(statuses).toEqual([202, 202, 202, 422, 422]);
    expect(stranger.status).toBe(202);
    // The first asks; the next two are answered here (the Contact from the projection); the
    // denied organization is asked each time; another Tenant's organization of that externalId
    // is its own.
    expect(callsOf(tenantId).slice(before)).toEqual([
      { tenantId, queries: [{ organizationExternalId: 'known-org' }] },
      { tenantId, queries: [{ organizationExternalId: 'no-such-org' }] },
      { tenantId, queries: [{ organizationExternalId: 'no-such-org' }] },
    ]);
    expect(callsOf(other.tenantId)).toEqual([
      { tenantId: other.tenantId, queries: [{ organizationExternalId: 'known-org' }] },
    ]);
  });
});

describe('erasure', () => {
  test('when a projected Contact is erased, then it is never resolved from the projection, before its contact.erased message arrives or after, and its externalId may name a new Contact', async () => {
    const { tenantId, token } = service.newTenant();
    const externalId = `erased-${randomUUID()}`;
    const contact = await service.contacts.createContact(tenantId, { externalId });
    await waitUntilProjected(tenantId, contact.id);
    // No message can arrive meanwhile: only this service's own erasure route acts.
    await stopRelay();

    const erased = await service.contacts.request(
      'POST',
      `/v1/contacts/by-id/${contact.id}/erase`,
      { token },
    );
    expect(erased.status).toBe(204);
    expect(await projected(tenantId, contact.id)).toEqual({
      external_id_sha256: null,
      updated_at: null,
      erased: true,
    });
    const refusedBefore = [
      await service.record('by-contact-id', token, {
        contactId: contact.id,
        eventName: 'L',
        occurredAt,
      }),
      await service.record('by-external-id', token, {
        contactExternalId: externalId,
        eventName: 'M',
        occurredAt,
      }),
    ];
    expect(refusedBefore.map((r) => r.status)).toEqual([422, 422]);
    expect(callsOf(tenantId)).toHaveLength(2);

    // The erasure's messages (and any replay of the Contact's snapshots) arrive.
    const running = await startRelay();
    await waitUntil(
      async () => (await running.contactIdentities.lag().catch(() => -1)) === 0,
      'the consumer caught up',
    );
    expect((await projected(tenantId, contact.id))?.erased).toBe(true);
    const refusedAfter = await service.record('by-contact-id', token, {
      contactId: contact.id,
      eventName: 'N',
      occurredAt,
    });
    expect(refusedAfter.status).toBe(422);
    expect(callsOf(tenantId)).toHaveLength(3);

    // The externalId is free again: it names the new Contact, locally too once projected.
    const successor = await service.contacts.createContact(tenantId, { externalId });
    await waitUntilProjected(tenantId, successor.id);
    const recorded = await service.record('by-external-id', token, {
      contactExternalId: externalId,
      eventName: 'O',
      occurredAt,
    });
    expect(recorded.status).toBe(202);
    expect(callsOf(tenantId)).toHaveLength(3);
    expect(await storedContactIds(tenantId)).toEqual([successor.id]);
  });
});

describe('replays and reordering', () => {
  const snapshot = contactSnapshotMessage;
  const applyMessage = (message: ContactIdentityMessage) =>
    applyContactIdentityMessages(pool, [message]);
  const erasedMessage = contactErasedMessage;
  const noFallback: IdentityResolver = () => Promise.reject(new Error('contacts was asked'));
  const resolveLocally = projectedIdentityResolver({ pool, fallback: noFallback });

  test('when an older snapshot is replayed after a newer one, then nothing changes', async () => {
    const tenantId = randomUUID();
    const contactId = randomUUID();
    const older = snapshot(tenantId, contactId, '2026-11-20T10:00:00.000Z');
    const newer = snapshot(tenantId, contactId, '2026-11-21T10:00:00.000Z', 'ext-1');

    await applyMessage(newer);
    const afterNewer = await projected(tenantId, contactId);
    await applyMessage(older);
    await applyMessage(newer);

    expect(await projected(tenantId, contactId)).toEqual(afterNewer);
    expect(afterNewer?.updated_at?.toISOString()).toBe('2026-11-21T10:00:00.000Z');
    expect(await resolveLocally(tenantId, [{ contactExternalId: 'ext-1' }, { contactId }])).toEqual(
      [
        { contactId, organizationExists: null },
        { contactId, organizationExists: null },
      ],
    );
  });

  test('when a snapshot arrives after its Contact was erased (a replay, or its erasure seen first), then the Contact stays erased and the lookup goes to contacts', async () => {
    const tenantId = randomUUID();
    const contactId = randomUUID();
    const other = randomUUID();
    await applyMessage(erasedMessage(tenantId, contactId));
    await applyMessage(snapshot(tenantId, contactId, '2026-11-23T10:00:00.000Z', 'ext-2'));
    // The compaction tombstone names the Contact by id alone.
    await applyMessage(snapshot(tenantId, other, '2026-11-23T10:00:00.000Z'));
    await applyMessage({
      topic: TOPICS.contactsChanged,
      key: other,
      value: null,
    });

    expect((await projected(tenantId, contactId))?.erased).toBe(true);
    expect((await projected(tenantId, other))?.erased).toBe(true);
    const asked: IdentityQuery[][] = [];
    const answers = await projectedIdentityResolver({
      pool,
      fallback: (_tenantId, queries) => {
        asked.push([...queries]);
        return Promise.resolve(queries.map(() => ({ contactId: null, organizationExists: null })));
      },
    })(tenantId, [{ contactId }, { contactExternalId: 'ext-2' }, { contactId: other }]);
    expect(asked).toEqual([[{ contactId }, { contactExternalId: 'ext-2' }, { contactId: other }]]);
    expect(answers.every((a) => a.contactId === null)).toBe(true);
  });

  test('when two live Contacts carry one externalId (an erasure not seen yet), then it is not answered here', async () => {
    const tenantId = randomUUID();
    const [a, b] = [randomUUID(), randomUUID()];
    await applyMessage(snapshot(tenantId, a, '2026-11-20T10:00:00.000Z', 'x'));
    await applyMessage(snapshot(tenantId, b, '2026-11-21T10:00:00.000Z', 'x'));

    await expect(resolveLocally(tenantId, [{ contactExternalId: 'x' }])).rejects.toThrow(
      'contacts was asked',
    );
  });

  test('when requests of two Tenants ask in the same turn, then one statement answers both, and each only from its own Tenant', async () => {
    const [tenantA, tenantB] = [randomUUID(), randomUUID()];
    const [a, b] = [randomUUID(), randomUUID()];
    await applyMessage(snapshot(tenantA, a, '2026-11-20T10:00:00.000Z', 'same'));
    await applyMessage(snapshot(tenantB, b, '2026-11-20T10:00:00.000Z', 'same'));
    const asked: Array<{ tenantId: string; queries: IdentityQuery[] }> = [];
    let statements = 0;
    const counted = {
      query: (...args: Parameters<typeof pool.query>) => {
        statements += 1;
        return pool.query(...args);
      },
    } as unknown as typeof pool;
    const resolve = projectedIdentityResolver({
      pool: counted,
      fallback: (tenantId, queries) => {
        asked.push({ tenantId, queries: [...queries] });
        return Promise.resolve(queries.map(() => ({ contactId: null, organizationExists: null })));
      },
    });
    const [ofA, ofB] = await Promise.all([
      resolve(tenantA, [{ contactExternalId: 'same' }, { contactId: a }, { contactId: b }]),
      resolve(tenantB, [{ contactExternalId: 'same' }, { contactId: b }, { contactId: a }]),
    ]);

    expect(ofA.map((r) => r.contactId)).toEqual([a, a, null]);
    expect(ofB.map((r) => r.contactId)).toEqual([b, b, null]);
    // The other Tenant's Contact id is a miss here, left to the contacts service.
    expect(asked).toEqual([
      { tenantId: tenantA, queries: [{ contactId: b }] },
      { tenantId: tenantB, queries: [{ contactId: a }] },
    ]);
    expect(statements).toBe(1);
  });

  test('when one turn asks for a Contact by id twice and by its externalId, then each asker gets it, and contact_identities is read only through its indexes', async () => {
    const tenantId = randomUUID();
    const contactId = randomUUID();
    await applyMessage(snapshot(tenantId, contactId, '2026-11-20T10:00:00.000Z', 'asked-twice'));
    const statements: Array<{ text: string; values: unknown[] }> = [];
    const recorded = {
      query: (config: { text: string; values: unknown[] }) => {
        statements.push(config);
        return pool.query(config);
      },
    } as unknown as typeof pool;
    const resolve = projectedIdentityResolver({
      pool: recorded,
      fallback: () => Promise.reject(new Error('contacts was asked')),
    });
    const answers = await Promise.all([
      resolve(tenantId, [{ contactId }, { contactExternalId: 'asked-twice' }]),
      resolve(tenantId, [{ contactId }, { contactExternalId: 'asked-twice' }]),
    ]);

    expect(answers.flat().map((a) => a.contactId)).toEqual([
      contactId,
      contactId,
      contactId,
      contactId,
    ]);
    expect(statements).toHaveLength(1);
    // Sequential scans off: a plan that can only scan the table (as an OR of the two ways of
    // asking does) still shows one, and a table of every Contact would be read per lookup. The
    // Tenant gets 500 more Contacts and the table statistics, as a live projection has: on a
    // handful of fresh rows the planner may read the Tenant's few rows instead of the index.
    await pool.query(
      `insert into contact_identities (tenant_id, contact_id, external_id_sha256, updated_at)
       select $1, gen_random_uuid(), sha256(convert_to('bulk-' || i, 'UTF8')), now()
       from generate_series(1, 500) as i`,
      [tenantId],
    );
    await pool.query('analyze contact_identities');
    const client = await pool.connect();
    try {
      await client.query('set enable_seqscan = off');
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(
        `explain ${statements[0]!.text}`,
        statements[0]!.values,
      );
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).toMatch(/Index (Only )?Scan using contact_identities_pkey/);
      expect(plan).toMatch(/Index (Only )?Scan using contact_identities_external_id_idx/);
      expect(plan).not.toMatch(/Seq Scan on contact_identities/);
    } finally {
      await client.query('reset enable_seqscan');
      client.release();
    }
  });
});
