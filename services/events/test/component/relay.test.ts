// The events outbox relay as its own process: what recording leaves in the outbox reaches
// herald.events.recorded (read back by a test consumer), expired dedup claims are pruned, and the
// process answers its probes whatever Kafka and PostgreSQL are doing.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { pino } from 'pino';
import { TOPICS } from '@herald/messages';
import { shardLockKey } from '@herald/outbox';
import { loadRelayConfig } from '../../src/config.js';
import { pruneDedupClaims } from '../../src/recording/data/dedup-pruning.js';
import {
  OUTBOX_NAME,
  startRelayProcess,
  type RelayProcess,
} from '../../src/relay/relay-process.js';
import {
  databaseUrl,
  enqueueRecorded,
  ensureEventsTopic,
  eventKey,
  insertDedupClaim,
  KAFKA_BROKERS,
  newEvent,
  prepareTestDatabase,
  recordedMessage,
  silentLogger,
  testPool,
  watchTopics,
  type StoredEvent,
  type TopicWatch,
} from '../contact-data-support.js';

// Its own database: the relays here publish and delete every outbox row they see.
const DATABASE = 'herald_events_test_relay';
const PACKAGE_DIR = fileURLToPath(new URL('../..', import.meta.url));
const RELAY_ENTRY = fileURLToPath(new URL('../../dist/relay/main.js', import.meta.url));

const pool = testPool(DATABASE);
let watch: TopicWatch;
const started: RelayProcess[] = [];

function relayConfig(env: Record<string, string> = {}) {
  return loadRelayConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl(DATABASE),
    KAFKA_BROKERS: KAFKA_BROKERS.join(','),
    ...env,
  });
}

async function startRelay(
  options: Parameters<typeof startRelayProcess>[1] = {},
): Promise<RelayProcess> {
  const relay = await startRelayProcess(relayConfig(), {
    logger: silentLogger(),
    pollIntervalMs: 50,
    // A group of its own: relays started and stopped back to back in one group keep Kafka
    // rebalancing, and a stop in the middle of a join may outlive the test. The consumer is
    // tested in contact-identities.test.ts.
    contactIdentitiesGroupId: `relay-test-${randomUUID()}`,
    ...options,
  });
  started.push(relay);
  return relay;
}

async function stopRelay(relay: RelayProcess): Promise<void> {
  started.splice(started.indexOf(relay), 1);
  await relay.close();
}

async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const outboxRows = async () =>
  Number((await pool.query<{ n: string }>('select count(*) as n from outbox')).rows[0]?.n);

const ofTenant = (tenantId: string) => (m: { value: unknown }) =>
  (m.value as { tenantId?: string } | null)?.tenantId === tenantId;

beforeAll(async () => {
  await prepareTestDatabase(DATABASE);
  await pool.query('truncate outbox, dedup_claims');
  await ensureEventsTopic();
  watch = await watchTopics([TOPICS.eventsRecorded]);
});

afterAll(async () => {
  await Promise.all(started.map((r) => r.close()));
  await watch?.stop();
  await pool.end();
});

describe('publishing', () => {
  test('when Events of Contacts and of an organization are in the outbox, then the relay publishes each one to herald.events.recorded with its key and value, and the outbox empties', async () => {
    const tenantId = randomUUID();
    const contactA = randomUUID();
    const contactB = randomUUID();
    const events: StoredEvent[] = [
      newEvent({ tenantId, contactId: contactA, properties: '{"total":12.5,"items":["a"]}' }),
      newEvent({ tenantId, contactId: contactB, dedupKey: 'order-1' }),
      newEvent({
        tenantId,
        organizationExternalId: 'acme/eu',
        eventName: 'Plan Upgraded',
        properties: '{"plan":"pro"}',
      }),
      newEvent({ tenantId, contactId: contactA, organizationExternalId: 'acme/eu' }),
    ];
    await enqueueRecorded(pool, events);

    const relay = await startRelay();
    try {
      const received = await watch.waitForCount(ofTenant(tenantId), events.length);

      expect(received).toHaveLength(events.length);
      for (const event of events) {
        const message = received.find((m) => (m.value as { eventId: string }).eventId === event.id);
        expect(message?.key).toBe(eventKey(event));
        expect(message?.value).toEqual(recordedMessage(event));
      }
      await waitUntil(async () => (await outboxRows()) === 0, 'the outbox is empty');
    } finally {
      await stopRelay(relay);
    }
  });

  test('when many Events of one Contact are enqueued in several transactions, then they arrive in that order, all on one partition', async () => {
    const tenantId = randomUUID();
    const contactId = randomUUID();
    const other = randomUUID();
    const events = Array.from({ length: 300 }, (_, i) =>
      newEvent({ tenantId, contactId: i % 3 === 2 ? other : contactId, eventName: `step ${i}` }),
    );
    for (let i = 0; i < events.length; i += 50) {
      await enqueueRecorded(pool, events.slice(i, i + 50));
    }

    const relay = await startRelay();
    try {
      const received = await watch.waitForCount(ofTenant(tenantId), events.length);

      for (const id of [contactId, other]) {
        const mine = received.filter((m) => (m.value as { contactId: string }).contactId === id);
        expect(mine.map((m) => (m.value as { eventId: string }).eventId)).toEqual(
          events.filter((e) => e.contactId === id).map((e) => e.id),
        );
        expect(new Set(mine.map((m) => m.partition)).size).toBe(1);
      }
    } finally {
      await stopRelay(relay);
    }
  });

  test('when two relay processes run against one outbox, then each Event is published exactly once', async () => {
    const tenantId = randomUUID();
    const events = Array.from({ length: 400 }, () =>
      newEvent({ tenantId, contactId: randomUUID() }),
    );
    const relays = await Promise.all([startRelay(), startRelay()]);
    try {
      for (let i = 0; i < events.length; i += 20) {
        await enqueueRecorded(pool, events.slice(i, i + 20));
      }
      await watch.waitForCount(ofTenant(tenantId), events.length);
      await waitUntil(async () => (await outboxRows()) === 0, 'the outbox is empty');
      // Anything sent twice would have arrived by now, next to its first copy.
      await new Promise((resolve) => setTimeout(resolve, 500));

      const ids = watch.received
        .filter(ofTenant(tenantId))
        .map((m) => (m.value as { eventId: string }).eventId);
      expect(ids).toHaveLength(events.length);
      expect(new Set(ids)).toEqual(new Set(events.map((e) => e.id)));
    } finally {
      await Promise.all(relays.map(stopRelay));
    }
  });

  test('when another replica holds every shard of the outbox, then this relay publishes nothing, logs the lag, and publishes everything once the shards are free', async () => {
    const lines: Array<{ msg?: string; pending?: number; lagSeconds?: number }> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
          lines.push(JSON.parse(line));
        }
        callback();
      },
    });
    const capturing = pino({ level: 'info' }, sink);

    const tenantId = randomUUID();
    const events = Array.from({ length: 5 }, () => newEvent({ tenantId, contactId: randomUUID() }));
    const holder = await pool.connect();
    try {
      const shards = relayConfig().OUTBOX_SHARDS;
      await holder.query('select pg_advisory_lock($1::int, s) from generate_series(0, $2 - 1) s', [
        shardLockKey(OUTBOX_NAME),
        shards,
      ]);
      await enqueueRecorded(pool, events);
      const relay = await startRelay({ logger: capturing, lagLogIntervalMs: 100 });
      try {
        await waitUntil(
          async () => lines.some((l) => l.msg === 'outbox lag' && (l.pending ?? 0) >= 5),
          'the lag is logged',
        );
        expect(await outboxRows()).toBeGreaterThanOrEqual(events.length);
        expect(watch.received.filter(ofTenant(tenantId))).toHaveLength(0);
        const lag = lines.find((l) => l.msg === 'outbox lag');
        expect(lag?.lagSeconds).toBeGreaterThan(0);

        await holder.query('select pg_advisory_unlock_all()');
        await watch.waitForCount(ofTenant(tenantId), events.length);
      } finally {
        await stopRelay(relay);
      }
    } finally {
      holder.release();
    }
  });
});

describe('dedup claims', () => {
  test('when claims are older than the 60 s window, then pruning deletes them and keeps the younger ones', async () => {
    const tenantId = randomUUID();
    const claim = (dedupKey: string, secondsAgo: number) =>
      insertDedupClaim(pool, {
        tenantId,
        dedupKey,
        eventId: randomUUID(),
        claimedAt: new Date(Date.now() - secondsAgo * 1000).toISOString(),
      });
    await claim('expired-long-ago', 3600);
    await claim('expired', 61);
    await claim('inside-window', 50);
    await claim('fresh', 0);
    const keys = async () =>
      (
        await pool.query<{ dedup_key: string }>(
          'select dedup_key from dedup_claims where tenant_id = $1 order by dedup_key',
          [tenantId],
        )
      ).rows.map((r) => r.dedup_key);

    const relay = await startRelay({ pruneIntervalMs: 100 });
    try {
      await waitUntil(async () => (await keys()).length === 2, 'the expired claims are deleted');
      expect(await keys()).toEqual(['fresh', 'inside-window']);
    } finally {
      await stopRelay(relay);
    }
  });

  test('when several replicas prune at once, then each deletes what is left and none fails', async () => {
    const tenantId = randomUUID();
    for (let i = 0; i < 50; i += 1) {
      await insertDedupClaim(pool, {
        tenantId,
        dedupKey: `old-${i}`,
        eventId: randomUUID(),
        claimedAt: new Date(Date.now() - 120_000).toISOString(),
      });
    }

    const deleted = await Promise.all([1, 2, 3].map(() => pruneDedupClaims(pool)));

    expect(deleted.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(50);
    const left = await pool.query('select 1 from dedup_claims where tenant_id = $1', [tenantId]);
    expect(left.rowCount).toBe(0);
  });
});

describe('the process', () => {
  /** A port nothing listens on. */
  async function closedPort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }

  /** The exit code (null after a signal), once the process has exited. */
  const exited = (child: ChildProcess) =>
    new Promise<number | null>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
      else child.once('exit', (code) => resolve(code));
    });

  const children: ChildProcess[] = [];
  // A test that fails halfway leaves its relays running; they would take shards and rows from
  // the tests after it.
  afterEach(async () => {
    const running = children
      .splice(0)
      .filter((child) => child.exitCode === null && child.signalCode === null);
    for (const child of running) child.kill('SIGKILL');
    await Promise.all(running.map(exited));
  });

  /** `node --import @herald/telemetry/register dist/relay/main.js`, as the stack and the chart run it. */
  async function spawnRelay(env: Record<string, string>): Promise<{
    child: ChildProcess;
    url: string;
    output: () => string;
  }> {
    if (!existsSync(RELAY_ENTRY)) throw new Error(`${RELAY_ENTRY} is missing: npm run build`);
    const port = await closedPort();
    const childEnv: Record<string, string | undefined> = {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'info',
      DATABASE_URL: databaseUrl(DATABASE),
      KAFKA_BROKERS: KAFKA_BROKERS.join(','),
      OTEL_SDK_DISABLED: 'true',
      NODE_OPTIONS: undefined,
      ...env,
    };
    const child = spawn(process.execPath, ['--import', '@herald/telemetry/register', RELAY_ENTRY], {
      cwd: PACKAGE_DIR,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    const url = `http://127.0.0.1:${port}`;
    await waitUntil(
      async () => {
        if (child.exitCode !== null) throw new Error(`relay exited ${child.exitCode}: ${output}`);
        return fetch(`${url}/healthz`).then(
          (r) => r.ok,
          () => false,
        );
      },
      'the relay process listens',
      20_000,
    );
    return { child, url, output: () => output };
  }

  /** Who publishes which shards, as the relays' heartbeats say. */
  const relayShares = async () =>
    (
      await pool.query<{ relay_id: string; shards: number[] }>(
        'select relay_id, shards from outbox_relays where outbox = $1 order by relay_id',
        [OUTBOX_NAME],
      )
    ).rows;

  /**
   * `count` relays publish every shard once, each within one of an even share. A relay's first
   * heartbeat writes its row before its share, so "every shard once" alone also holds for a
   * moment while the newcomer still shows none.
   */
  const sharedBy = (count: number) => async () => {
    const rows = await relayShares();
    const shards = rows.flatMap((row) => row.shards);
    const total = relayConfig().OUTBOX_SHARDS;
    return (
      rows.length === count &&
      new Set(shards).size === total &&
      shards.length === total &&
      rows.every((row) => Math.abs(row.shards.length - total / count) < 1)
    );
  };

  /** Enqueues the Events 10 at a time every 20 ms, as a steady recording would. */
  async function enqueueSteadily(events: readonly StoredEvent[]): Promise<void> {
    for (let i = 0; i < events.length; i += 10) {
      await enqueueRecorded(pool, events.slice(i, i + 10));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** 30 Contacts' Events, numbered in the order they are enqueued. */
  function stepsOf(tenantId: string, count: number): StoredEvent[] {
    const contacts = Array.from({ length: 30 }, () => randomUUID());
    return Array.from({ length: count }, (_, i) =>
      newEvent({ tenantId, contactId: contacts[i % 30]!, eventName: `step ${i}` }),
    );
  }

  /**
   * Every Event arrived; with repeats left out, each Contact's arrived in the order enqueued.
   * Returns how many arrived twice (a relay killed after Kafka took its batch, before deleting it).
   */
  async function expectAllInOrder(tenantId: string, events: readonly StoredEvent[]) {
    await watch.waitForCount(ofTenant(tenantId), events.length, 60_000);
    await waitUntil(async () => (await outboxRows()) === 0, 'the outbox is empty', 30_000);
    // Anything sent twice would have arrived by now, next to its first copy.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const arrived = watch.received
      .filter(ofTenant(tenantId))
      .map((m) => m.value as { eventId: string; contactId: string });
    const firsts = arrived.filter(
      (m, i) => arrived.findIndex((o) => o.eventId === m.eventId) === i,
    );
    expect(new Set(firsts.map((m) => m.eventId))).toEqual(new Set(events.map((e) => e.id)));
    for (const contactId of new Set(events.map((e) => e.contactId))) {
      expect(firsts.filter((m) => m.contactId === contactId).map((m) => m.eventId)).toEqual(
        events.filter((e) => e.contactId === contactId).map((e) => e.id),
      );
    }
    return arrived.length - firsts.length;
  }

  test('when two relay processes run, then they share the shards evenly; when one is killed with SIGKILL under steady recording, the other publishes its shards within 5 s, nothing is lost and each Contact keeps its order', async () => {
    const tenantId = randomUUID();
    const events = stepsOf(tenantId, 3000);
    const a = await spawnRelay({});
    const b = await spawnRelay({});
    await waitUntil(sharedBy(2), 'the two relays share the shards');
    expect((await relayShares()).map((row) => row.shards.length)).toEqual([16, 16]);

    const recording = enqueueSteadily(events);
    await watch.waitForCount(ofTenant(tenantId), 1000, 30_000);
    a.child.kill('SIGKILL');
    const killedAt = Date.now();
    await waitUntil(sharedBy(1), 'the survivor publishes every shard', 15_000);
    const movedMs = Date.now() - killedAt;
    await recording;

    expect(movedMs).toBeLessThanOrEqual(5_000);
    const repeats = await expectAllInOrder(tenantId, events);
    // At most the batch the killed relay had sent and not yet deleted.
    expect(repeats).toBeLessThanOrEqual(1000);
    b.child.kill('SIGTERM');
    expect(await exited(b.child)).toBe(0);
  }, 90_000);

  test('when the relays are restarted one after the other under steady recording, then every Event is published exactly once and in order', async () => {
    const tenantId = randomUUID();
    const events = stepsOf(tenantId, 2000);
    const first = [await spawnRelay({}), await spawnRelay({})];
    await waitUntil(sharedBy(2), 'the two relays share the shards');

    const recording = enqueueSteadily(events);
    const second = [];
    for (const old of first) {
      old.child.kill('SIGTERM');
      expect(await exited(old.child)).toBe(0);
      second.push(await spawnRelay({}));
      await waitUntil(sharedBy(2), 'the new relay takes its share');
    }
    await recording;

    expect(await expectAllInOrder(tenantId, events)).toBe(0);
    for (const relay of second) relay.child.kill('SIGTERM');
    expect(await Promise.all(second.map((relay) => exited(relay.child)))).toEqual([0, 0]);
  }, 90_000);

  test('when Kafka is unreachable at start, then the process stays up, answers /healthz and /readyz, and keeps the messages', async () => {
    const tenantId = randomUUID();
    const before = await outboxRows();
    const { child, url } = await spawnRelay({ KAFKA_BROKERS: `127.0.0.1:${await closedPort()}` });
    await enqueueRecorded(pool, [newEvent({ tenantId, contactId: randomUUID() })]);

    await new Promise((resolve) => setTimeout(resolve, 1000));

    expect(child.exitCode).toBeNull();
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await outboxRows()).toBe(before + 1);
    child.kill('SIGKILL');
    await exited(child);
    await pool.query('truncate outbox');
  });

  test('when the database is unreachable, then /readyz answers 503 and /healthz 200', async () => {
    const { child, url } = await spawnRelay({
      DATABASE_URL: `postgres://herald@127.0.0.1:${await closedPort()}/herald_events`,
    });

    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({
      code: 'service_unavailable',
      checks: { database: 'failing' },
    });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(child.exitCode).toBeNull();
    child.kill('SIGKILL');
    await exited(child);
  });

  test('when the process gets SIGTERM, then it publishes what is pending, shuts down gracefully and exits 0', async () => {
    const tenantId = randomUUID();
    const { child, url, output } = await spawnRelay({});
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    const events = [newEvent({ tenantId, contactId: randomUUID() })];
    await enqueueRecorded(pool, events);
    await watch.waitForCount(ofTenant(tenantId), 1);

    child.kill('SIGTERM');

    expect(await exited(child)).toBe(0);
    expect(output()).toMatch(/"msg":"stopped"/);
  });
});
