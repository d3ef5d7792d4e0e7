import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createPool, type Pool } from '@herald/db';
import { createKafka, createProducer, ensureTopics, type Producer } from '@herald/kafka';
import {
  OUTBOX_RELAYS_TABLE_SQL,
  OUTBOX_TABLE_SQL,
  createOutboxRelay,
  enqueue,
} from '../../src/index.js';
import { createOutboxVacuum } from '../../src/vacuum.js';

// The relay vacuums the outbox itself after enough deleted rows (autovacuum comes at most once a
// minute). Real PostgreSQL (a scratch database) and, for the relay, a scratch Kafka topic.

const adminUrl = `${process.env.HERALD_POSTGRES_URL ?? 'postgres://herald@127.0.0.1:55432'}/postgres`;
const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:59092').split(',');
const dbName = `herald_test_outbox_vacuum_${process.pid}_${Date.now()}`;
const topic = `test.outbox.vacuum.${randomUUID()}`;

let pool: Pool;
let producer: Producer;
const warnings: string[] = [];
const logger = {
  warn: (_obj: object, msg?: string) => warnings.push(msg ?? ''),
  info: () => {},
};

async function admin(sql: string) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Manual vacuums of the outbox so far (pg_stat_user_tables; autovacuum counts apart). */
async function vacuums(): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `select vacuum_count::int as n from pg_stat_user_tables where relname = 'outbox'`,
  );
  return rows[0]!.n;
}

async function outboxBytes(): Promise<number> {
  const { rows } = await pool.query<{ bytes: string }>(
    `select pg_relation_size('outbox') as bytes`,
  );
  return Number(rows[0]!.bytes);
}

/** Enqueues `count` messages and deletes them, as the relay does once they are published. */
async function churn(count: number): Promise<void> {
  await enqueue(
    pool,
    Array.from({ length: count }, (_, i) => ({ topic, key: `k${i}`, value: { i } })),
  );
  await pool.query('delete from outbox');
}

beforeAll(async () => {
  await admin(`create database ${dbName}`);
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  pool = createPool({ connectionString: url.toString(), applicationName: 'outbox-vacuum-test' });
  await pool.query(OUTBOX_TABLE_SQL);
  await pool.query(OUTBOX_RELAYS_TABLE_SQL);
  const kafka = createKafka({ brokers, clientId: 'outbox-vacuum-test' });
  await ensureTopics(kafka, [{ topic, numPartitions: 1 }]);
  producer = createProducer(kafka);
}, 60_000);

afterAll(async () => {
  await producer?.close();
  const kafka = createKafka({ brokers, clientId: 'outbox-vacuum-test' });
  const kafkaAdmin = kafka.admin();
  await kafkaAdmin.deleteTopics({ topics: [topic] });
  await kafkaAdmin.close();
  await pool?.end();
  await admin(`drop database if exists ${dbName} with (force)`);
}, 60_000);

describe('the outbox vacuum', () => {
  it('when fewer rows than afterRows were deleted, then nothing is vacuumed; once afterRows were, the outbox is, and the next rows take the space of the deleted ones', async () => {
    const vacuum = createOutboxVacuum({ pool, logger, name: 'test', afterRows: 100 });
    await churn(150);
    const before = await vacuums();

    vacuum.deleted(60);
    await vacuum.idle();
    expect(await vacuums()).toBe(before);

    vacuum.deleted(90);
    await vacuum.idle();
    expect(await vacuums()).toBe(before + 1);
    const size = await outboxBytes();
    await churn(150);
    expect(await outboxBytes()).toBe(size);
    expect(warnings).toEqual([]);
  });

  it('when a vacuum is done, then its connection is back in the pool with the statement timeout the pool gave it', async () => {
    const url = new URL(adminUrl);
    url.pathname = `/${dbName}`;
    const single = createPool({
      connectionString: url.toString(),
      applicationName: 'outbox-vacuum-test-single',
      max: 1,
    });
    try {
      const vacuum = createOutboxVacuum({ pool: single, logger, name: 'test', afterRows: 1 });
      await churn(10);
      const before = await vacuums();
      vacuum.deleted(10);
      await vacuum.idle();
      expect(await vacuums()).toBe(before + 1);
      const { rows } = await single.query<{ statement_timeout: string }>('show statement_timeout');
      expect(rows[0]!.statement_timeout).toBe('10s');
    } finally {
      await single.end();
    }
  });

  it('when afterRows is 0, then it never vacuums', async () => {
    const vacuum = createOutboxVacuum({ pool, logger, name: 'test', afterRows: 0 });
    await churn(50);
    const before = await vacuums();
    vacuum.deleted(1_000_000);
    await vacuum.idle();
    expect(await vacuums()).toBe(before);
  });

  it('when the relay has published vacuumAfterRows rows, then it has vacuumed the outbox by the time it stops', async () => {
    const relay = createOutboxRelay({
      pool,
      producer,
      logger,
      name: `vacuum-${randomUUID()}`,
      vacuumAfterRows: 20,
    });
    await enqueue(
      pool,
      Array.from({ length: 25 }, (_, i) => ({ topic, key: `k${i}`, value: { i } })),
    );
    const before = await vacuums();

    expect(await relay.runOnce()).toBe(25);
    await relay.stop();

    expect(await vacuums()).toBe(before + 1);
    expect(warnings).toEqual([]);
  });

  it('refuses a vacuumAfterRows that is not a whole number of 0 or more', () => {
    expect(() =>
      createOutboxRelay({ pool, producer, logger, name: 'bad', vacuumAfterRows: -1 }),
    ).toThrow(RangeError);
  });
});
