// Offboarding a Tenant end to end: a Tenant with a key, Contacts, Events, an organization, its
// event-name catalog and a billing state is deleted with the operator CLI; afterwards no table of
// any service's database holds a row that mentions its id, `tenant.deleted` is on
// herald.tenants.deleted, and its old token answers 401. Needs a built CLI (`npm run build`).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createPool, type Pool } from '@herald/db';
import { tenantDeletedMessage, TOPICS } from '@herald/messages';
import type { RedisClient } from '@herald/redis';
import {
  pollUntil,
  DUMP_SEARCH_TIMEOUT_MS,
  searchHeraldDatabaseDumps,
  testDatabaseUrl,
  watchTenant,
  type TenantWatch,
} from '@herald/testing';
import { createRedis, subscriptionKeyFor } from './redis-support.js';
import {
  admin,
  basic,
  call,
  exchange,
  expectError,
  expectStatus,
  newKey,
  newTenant,
  repoRoot,
  runCli,
} from './support.js';

/** The grace before the second pass (TENANT_DELETION_GRACE_SECONDS, 30 s) and the rest. */
const DELETION_TIMEOUT_MS = 120_000;

/** Every database of the stack, from its registry (tools/stack/src/processes.generated.json). */
const DATABASES = [
  ...new Set(
    (
      JSON.parse(
        readFileSync(
          path.join(repoRoot, 'tools', 'stack', 'src', 'processes.generated.json'),
          'utf8',
        ),
      ) as { database: string | null }[]
    ).flatMap((p) => (p.database ? [p.database] : [])),
  ),
];

let pools: Map<string, Pool>;
beforeAll(() => {
  pools = new Map(
    DATABASES.map((database) => [
      database,
      createPool({
        connectionString: testDatabaseUrl(database),
        applicationName: 'e2e-tenant-deletion',
        max: 1,
        // The scan reads whole tables of a stack grown by benchmarks.
        statementTimeoutMillis: 120_000,
      }),
    ]),
  );
});
afterAll(async () => {
  await Promise.all([...pools.values()].map((pool) => pool.end()));
});

/**
 * For each value, the tables (as `database.table`) holding a row that mentions it in any column:
 * every table of every database, found through information_schema, so a table added later is
 * covered (a partitioned table once, with its partitions). One scan per table for all values.
 */
async function tablesMentioning(values: readonly string[]): Promise<Record<string, string[]>> {
  const needles = values.map((v) => v.toLowerCase());
  const found: Record<string, string[]> = Object.fromEntries(values.map((v) => [v, []]));
  for (const [database, pool] of pools) {
    const { rows: tables } = await pool.query<{ name: string }>(
      `select t.table_name as name from information_schema.tables t
       join pg_class c on c.oid = format('%I.%I', t.table_schema, t.table_name)::regclass
       where t.table_schema = 'public' and t.table_type = 'BASE TABLE' and not c.relispartition
       order by 1`,
    );
    for (const { name } of tables) {
      const { rows } = await pool.query<{ needle: string }>(
        `select distinct n.needle from "${name}" r
         cross join lateral (select lower(r::text) as text) t
         join unnest($1::text[]) as n(needle) on strpos(t.text, n.needle) > 0`,
        [needles],
      );
      for (const { needle } of rows)
        found[values[needles.indexOf(needle)]!]!.push(`${database}.${name}`);
    }
  }
  return found;
}

const ALL_SCOPES = [
  'contacts:read',
  'contacts:write',
  'contacts:erase',
  'contacts:export',
  'events:write',
];

describe('offboarding a Tenant', () => {
  let watch: TenantWatch | undefined;
  afterAll(() => watch?.stop());

  it(
    'when a Tenant with data in every service is deleted, then no database holds a row mentioning it, tenant.deleted is published, and its old token answers 401',
    async () => {
      const tenantId = await newTenant('Offboarded E2E');
      const key = await newKey(tenantId, { kind: 'secret', scopes: ALL_SCOPES });
      const exchanged = await exchange(basic(key.clientId, key.secret!));
      expect(exchanged.status).toBe(200);
      const { accessToken: token } = await exchanged.json<{ accessToken: string }>();

      // Contacts (one erased), Events with dedupKeys, an organization and its Event, billing.
      const contactIds: string[] = [];
      for (const externalId of ['ada', 'grace', 'erased']) {
        const res = await call('PUT', `/v1/contacts/${externalId}`, token, {
          email: `${externalId}-${tenantId.slice(0, 8)}@example.com`,
          name: externalId,
        });
        expect(res.status).toBe(201);
        contactIds.push((await res.json<{ id: string }>()).id);
      }
      const occurredAt = '2026-03-01T10:00:00.000Z';
      await expectStatus(
        await call(
          'POST',
          '/v1/events/by-contact-id',
          token,
          contactIds.map((contactId, i) => ({
            contactId,
            eventName: `Offboarding ${i}`,
            occurredAt,
            dedupKey: `offboarding-${i}`,
            properties: { tenantEcho: tenantId },
          })),
        ),
        202,
      );
      await expectStatus(await call('POST', '/v1/contacts/erased/erase', token), 204);
      await expectStatus(
        await admin('POST', `/tenants/${tenantId}/organizations`, { externalId: 'org-1' }),
        201,
      );
      await expectStatus(
        await call('POST', '/v1/events/by-organization', token, {
          organizationExternalId: 'org-1',
          eventName: 'Renewed',
          occurredAt,
        }),
        202,
      );
      await expectStatus(await admin('POST', `/tenants/${tenantId}/billing/payment-failures`), 200);
      // The search can fail: every service holds the Tenant now.
      let before: string[] = [];
      await pollUntil(
        async () => {
          before = (await tablesMentioning([tenantId]))[tenantId]!;
          return new Set(before.map((table) => table.split('.')[0])).size === DATABASES.length;
        },
        { timeoutMs: 10_000, what: 'the Tenant in every database' },
      );
      expect(before).toEqual(
        expect.arrayContaining([
          'herald_auth.api_keys',
          'herald_contacts.contacts',
          'herald_events.events',
          'herald_billing.subscriptions',
        ]),
      );

      watch = await watchTenant(TOPICS.tenantsDeleted, tenantId, {
        clientId: 'e2e-tenant-deletion',
        groupPrefix: 'e2e-tenant-deletion',
      });

      // Without the typed confirmation nothing happens.
      await expectError(await admin('DELETE', `/tenants/${tenantId}`), 400, 'validation_error');
      await expectStatus(await call('GET', '/v1/contacts/ada', token), 200);

      const deleted = await runCli([
        'tenants',
        'delete',
        '--tenant',
        tenantId,
        '--confirm',
        tenantId,
        '--json',
      ]);
      expect(deleted).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(deleted.stdout)).toEqual({
        id: tenantId,
        status: 'deleting',
        requestedAt: expect.any(String),
      });
      // Its key cannot exchange from the start.
      await expectError(await exchange(basic(key.clientId, key.secret!)), 401, 'invalid_client');

      await pollUntil(
        async () =>
          (await admin('DELETE', `/tenants/${tenantId}?confirm=${tenantId}`)).status === 404,
        { timeoutMs: DELETION_TIMEOUT_MS, what: 'the deletion done' },
      );

      // The old token: refused by every service.
      await expectError(await call('GET', '/v1/contacts/ada', token), 401, 'unauthenticated');
      await expectError(
        await call('POST', '/v1/events/by-contact-id', token, {
          contactId: contactIds[0],
          eventName: 'After',
          occurredAt,
        }),
        401,
        'unauthenticated',
      );
      // Every other operator route: no such Tenant.
      await expectError(await admin('GET', `/tenants/${tenantId}/billing`), 404, 'not_found');

      const [message] = await watch.waitForCount(1);
      expect(message!.key).toBe(tenantId);
      expect(tenantDeletedMessage.parse(message!.value)).toMatchObject({ tenantId });

      // The relays publish (and so delete) the last outbox rows within moments.
      const values = [tenantId, ...contactIds, key.clientId];
      let after: Record<string, string[]> = {};
      await pollUntil(
        async () => {
          after = await tablesMentioning(values);
          return values.every((v) => after[v]!.length === 0 || v === key.clientId);
        },
        { timeoutMs: 15_000, what: 'no table mentioning the Tenant' },
      );
      expect(after).toEqual({
        ...Object.fromEntries([tenantId, ...contactIds].map((v) => [v, []])),
        // Its key's ClientID stays on the revocation list until its tokens have expired.
        [key.clientId]: ['herald_auth.deleted_key_revocations'],
      });

      // And what a backup would hold: a dump of every database of the stack (schema and data).
      // Not the scratch databases of other test files running meanwhile: some run consumers of
      // the shared topics of their own, other installations that projected these Contacts too.
      const dumps = await searchHeraldDatabaseDumps(
        [tenantId, ...contactIds],
        undefined,
        DATABASES,
      );
      expect(dumps.databases).toEqual(expect.arrayContaining(DATABASES));
      expect(
        Object.fromEntries([tenantId, ...contactIds].map((v) => [v, dumps.holding(v)])),
      ).toEqual(Object.fromEntries([tenantId, ...contactIds].map((v) => [v, []])));

      // Redis: the subscription copy (which never expires) is gone; what is left expires alone.
      const redis = await createRedis();
      try {
        expect(await redis.exists(subscriptionKeyFor(tenantId))).toBe(0);
        // The stack's Redis is a single node.
        const node = redis as RedisClient;
        for await (const keys of node.scanIterator({ MATCH: `*${tenantId}*`, COUNT: 1000 })) {
          for (const found of keys) {
            const ttl = await node.pTTL(found);
            expect({ key: found, expires: ttl > 0 && ttl <= 61_000 }).toEqual({
              key: found,
              expires: true,
            });
          }
        }
      } finally {
        redis.destroy();
      }
    },
    // The deletion, and each search of the databases (a full read of tables a benchmark grew),
    // then their dumps.
    DELETION_TIMEOUT_MS + 240_000 + DUMP_SEARCH_TIMEOUT_MS,
  );
});
