// Decisions H.2, through the real seam: after a Contact's erasure through the contacts service's
// public route (204), no database the tests use (every Herald database: the contacts and events
// test databases included) holds its email, name, phone or externalId, the properties of its
// Events or their raw dedupKeys; nor does this Tenant's dedup namespace in Redis. Each database
// is dumped with pg_dump and searched.
import { execFile } from 'node:child_process';
import { randomInt, randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createPool } from '@herald/db';
import { taggedKey, type RedisClient } from '@herald/redis';
import { startEventsService, type TestEventsService } from './support.js';

const SERVER_URL = process.env.HERALD_POSTGRES_URL ?? 'postgres://herald@127.0.0.1:55432';
/** The databases test setup uses here (support.ts); they must be among those dumped. */
const TEST_DATABASES = [
  process.env.HERALD_EVENTS_TEST_DATABASE ?? 'herald_events_test',
  'herald_events_test_contacts',
];

/** `$HERALD_PG_BIN/pg_dump`, else the newest /usr/lib/postgresql/<version>/bin/pg_dump. */
function findPgDump(): string {
  if (process.env.HERALD_PG_BIN) return path.join(process.env.HERALD_PG_BIN, 'pg_dump');
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(path.join(root, v, 'bin', 'pg_dump')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!versions[0]) throw new Error('pg_dump not found: set HERALD_PG_BIN to its folder');
  return path.join(root, versions[0], 'bin', 'pg_dump');
}

async function heraldDatabases(): Promise<string[]> {
  const pool = createPool({
    connectionString: `${SERVER_URL}/postgres`,
    applicationName: 'events-erasure-dump-test',
    max: 1,
  });
  try {
    const { rows } = await pool.query<{ datname: string }>(
      `select datname from pg_database where datname like 'herald\\_%' and datallowconn
       order by datname`,
    );
    return rows.map((r) => r.datname);
  } finally {
    await pool.end();
  }
}

/** Every Herald database's full dump (schema and data), by name. */
async function dumpEveryDatabase(): Promise<Map<string, string>> {
  const pgDump = findPgDump();
  const dumps = new Map<string, string>();
  for (const database of await heraldDatabases()) {
    try {
      const { stdout } = await promisify(execFile)(
        pgDump,
        ['--no-password', '--dbname', `${SERVER_URL}/${database}`],
        { maxBuffer: 1024 * 1024 * 1024, encoding: 'utf8' },
      );
      dumps.set(database, stdout);
    } catch (err) {
      // A disposable test database another test file dropped in the meantime holds nothing.
      if (!(await heraldDatabases()).includes(database)) continue;
      throw err;
    }
  }
  return dumps;
}

/** The databases whose dump contains the value (case-insensitively). */
function holding(dumps: Map<string, string>, value: string): string[] {
  const needle = value.toLowerCase();
  return [...dumps].filter(([, dump]) => dump.toLowerCase().includes(needle)).map(([db]) => db);
}

let service: TestEventsService;
beforeAll(async () => {
  service = await startEventsService({ contactDataSeam: true });
});
afterAll(() => service?.close());

/** Every value under this Tenant's dedup namespace in Redis: its keys and what they hold. */
async function dedupNamespace(tenantId: string): Promise<string[]> {
  // The tests' Redis is a single node.
  const redis = service.redis as RedisClient;
  const found: string[] = [];
  for await (const keys of redis.scanIterator({
    MATCH: taggedKey('dedup', tenantId, '*'),
    COUNT: 1000,
  })) {
    for (const key of [keys].flat()) {
      found.push(key, (await redis.get(key)) ?? '');
    }
  }
  return found;
}

describe('erasure leaves no trace of a Contact or its Events in any database', () => {
  it('when a Contact with Events is erased through the contacts service, then no dump of any Herald database holds its email, name, phone, externalId, its Events\u2019 properties or raw dedupKeys, and Redis holds no raw dedupKey', async () => {
    // Unique, recognisable values, so a match can only be this Contact.
    const suffix = randomUUID().replaceAll('-', '').slice(0, 12);
    const digits = Array.from({ length: 12 }, () => randomInt(10)).join('');
    const traces = {
      email: `events-dump-${suffix}@example.com`,
      name: `Lastname EventsDump${suffix}`,
      phone: `+49${digits}`,
      externalId: `events-dump-ext-${suffix}`,
      property: `events-dump-prop-${suffix}`,
      dedupKey: `events-dump-key-${suffix}`,
    };
    const { tenantId, token } = service.newTenant();
    const created = await service.contacts.request('PUT', `/v1/contacts/${traces.externalId}`, {
      token,
      body: { email: traces.email, name: traces.name, phone: traces.phone },
    });
    expect(created.status).toBe(201);
    const { id } = await created.json<{ id: string }>();
    const occurredAt = '2026-11-21T10:00:00Z';
    const recorded = await service.record('by-contact-id', token, [
      {
        contactId: id,
        eventName: 'Dumped',
        occurredAt,
        dedupKey: traces.dedupKey,
        properties: { note: traces.property },
      },
      {
        contactId: id,
        eventName: 'Dumped Again',
        occurredAt,
        dedupKey: `${traces.dedupKey}-2`,
        properties: { nested: { list: [traces.property] } },
      },
    ]);
    expect(recorded.status).toBe(202);

    // The search can fail: before the erasure, the dumps do hold every value.
    const before = await dumpEveryDatabase();
    expect([...before.keys()]).toEqual(expect.arrayContaining(TEST_DATABASES));
    for (const value of Object.values(traces)) {
      expect({ value, databases: holding(before, value).length > 0 }).toEqual({
        value,
        databases: true,
      });
    }
    // The fast path remembered the claims (under the keys' hashes).
    expect((await dedupNamespace(tenantId)).length).toBe(4);

    const erase = await service.contacts.request('POST', `/v1/contacts/by-id/${id}/erase`, {
      token,
    });
    expect(erase.status).toBe(204);

    const after = await dumpEveryDatabase();
    expect([...after.keys()]).toEqual(expect.arrayContaining(TEST_DATABASES));
    for (const value of Object.values(traces)) {
      expect({ value, databases: holding(after, value) }).toEqual({ value, databases: [] });
    }
    const redisValues = await dedupNamespace(tenantId);
    for (const value of Object.values(traces)) {
      expect(redisValues.filter((v) => v.includes(value))).toEqual([]);
    }
  }, 120_000);
});
